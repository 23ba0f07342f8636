//! A typed view of a swagger 2.0 document: operations, parameters, definitions.
//!
//! Parsing walks the JSON by hand rather than through `serde` derives so that each problem is
//! reported with its JSON pointer, and so that the many extension keys Gitea adds
//! (`x-go-name`, `x-go-package`, …) never break a load.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

use super::{Error, malformed, pointer_token};

/// The HTTP methods an operation can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HttpMethod {
    /// `GET`
    Get,
    /// `HEAD`
    Head,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `PATCH`
    Patch,
    /// `DELETE`
    Delete,
    /// `OPTIONS`
    Options,
}

impl HttpMethod {
    /// Parses a swagger path-item key (`get`, `post`, …); `None` for other keys.
    pub fn from_swagger_key(key: &str) -> Option<HttpMethod> {
        Some(match key {
            "get" => HttpMethod::Get,
            "head" => HttpMethod::Head,
            "post" => HttpMethod::Post,
            "put" => HttpMethod::Put,
            "patch" => HttpMethod::Patch,
            "delete" => HttpMethod::Delete,
            "options" => HttpMethod::Options,
            _ => return None,
        })
    }

    /// Parses a method name, case-insensitively.
    pub fn parse(s: &str) -> Option<HttpMethod> {
        HttpMethod::from_swagger_key(&s.to_ascii_lowercase())
    }

    /// The canonical upper-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Head => "HEAD",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Delete => "DELETE",
            HttpMethod::Options => "OPTIONS",
        }
    }

    /// True for methods that only read (`GET`, `HEAD`, `OPTIONS`).
    pub fn is_read(self) -> bool {
        matches!(
            self,
            HttpMethod::Get | HttpMethod::Head | HttpMethod::Options
        )
    }
}

impl fmt::Display for HttpMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a parameter travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamLocation {
    /// A `{name}` segment of the path template.
    Path,
    /// The query string.
    Query,
    /// A request header.
    Header,
    /// The JSON (or text) request body.
    Body,
    /// A `multipart/form-data` field.
    FormData,
}

/// How an array query parameter is serialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectionFormat {
    /// `a,b,c` (swagger's default).
    Csv,
    /// `name=a&name=b` (what Gitea's array filters expect).
    Multi,
    /// `a b c`
    Ssv,
    /// `a\tb\tc`
    Tsv,
    /// `a|b|c`
    Pipes,
}

/// What a successful answer carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseKind {
    /// A JSON document.
    Json,
    /// Text: diffs, patches, rendered HTML, raw text files.
    Text,
    /// Bytes: archives, raw files, artifacts.
    Binary,
    /// Only a 3xx redirect is documented.
    Redirect,
    /// No body (`204`, or a 2xx without a schema).
    Empty,
}

impl ResponseKind {
    /// Lower-case name used in the catalog's JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseKind::Json => "json",
            ResponseKind::Text => "text",
            ResponseKind::Binary => "binary",
            ResponseKind::Redirect => "redirect",
            ResponseKind::Empty => "empty",
        }
    }
}

/// Which product served the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Gitea.
    Gitea,
    /// Forgejo (its `info.version` ends in `+gitea-<compat>`).
    Forgejo,
}

impl Flavor {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Flavor::Gitea => "gitea",
            Flavor::Forgejo => "forgejo",
        }
    }
}

/// One parameter of an operation, with its JSON Schema already translated from swagger 2.0.
#[derive(Debug, Clone)]
pub struct Parameter {
    /// The parameter's name as Gitea expects it on the wire.
    pub name: String,
    /// Where it travels.
    pub location: ParamLocation,
    /// Whether Gitea requires it (always true for path parameters).
    pub required: bool,
    /// Human description (control characters removed).
    pub description: String,
    /// JSON Schema of the value. For `body`, refs still point at `#/definitions/…`.
    pub schema: Value,
    /// For array query parameters, how they are serialised.
    pub collection_format: Option<CollectionFormat>,
    /// For `formData`, true when the field is a file upload.
    pub is_file: bool,
}

/// One (path, method) of the document.
#[derive(Debug, Clone)]
pub struct Operation {
    /// The HTTP method.
    pub method: HttpMethod,
    /// The path template relative to the API base (`/repos/{owner}/{repo}`).
    pub path: String,
    /// The operationId (unique within the document).
    pub operation_id: String,
    /// One-line summary (control characters removed).
    pub summary: String,
    /// Longer description, often empty (control characters removed).
    pub description: String,
    /// Swagger tags (`repository`, `issue`, …).
    pub tags: Vec<String>,
    /// Path-level and operation-level parameters, in document order.
    pub parameters: Vec<Parameter>,
    /// Accepted request content types.
    pub consumes: Vec<String>,
    /// Produced response content types.
    pub produces: Vec<String>,
    /// Whether the operation is marked deprecated.
    pub deprecated: bool,
    /// What a successful answer carries.
    pub response: ResponseKind,
    /// The successful answer is a JSON array (a collection).
    pub returns_list: bool,
    /// The only successful answer documented is `204 No Content` (a check such as "is this
    /// user a member" answers by its status alone).
    pub no_content: bool,
    /// The definition a successful answer holds (or lists), when it names one.
    pub response_definition: Option<String>,
    /// sha256 of the operation's JSON, used to tell changed operations apart.
    pub digest: String,
}

/// A parsed API description.
#[derive(Debug, Clone)]
pub struct Spec {
    /// sha256 (hex) of the document's bytes as loaded.
    pub sha256: String,
    /// `info.title`.
    pub title: String,
    /// `info.version`, or `unknown` when the document is an unrendered template.
    pub version: String,
    /// `basePath` with template placeholders removed (normally `/api/v1`).
    pub base_path: String,
    /// Gitea or Forgejo.
    pub flavor: Flavor,
    /// Every operation, sorted by path then method.
    pub operations: Vec<Operation>,
    /// `definitions`, the targets of `#/definitions/…` refs.
    pub definitions: Map<String, Value>,
}

const TEMPLATE_VERSIONS: [&str; 2] = ["{{.SwaggerAppVer}}", "0.0.0+GITEA-API-APP-VERSION"];
const TEMPLATE_SUBURLS: [&str; 2] = ["{{.SwaggerAppSubUrl}}", "/GITEA-API-APP-SUBURL"];

impl Spec {
    /// Parses a document from its bytes.
    pub fn parse(bytes: &[u8]) -> Result<Spec, Error> {
        let doc: Value = serde_json::from_slice(bytes).map_err(|e| Error::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        Spec::from_value(&doc, crate::digest::sha256_hex(bytes))
    }

    /// Builds the typed view from an already parsed document.
    pub fn from_value(doc: &Value, sha256: String) -> Result<Spec, Error> {
        let root = doc
            .as_object()
            .ok_or_else(|| malformed("", "expected a JSON object"))?;
        match root.get("swagger").and_then(Value::as_str) {
            Some("2.0") => {}
            Some(other) => {
                return Err(malformed(
                    "/swagger",
                    format!("expected swagger \"2.0\", found {other:?}"),
                ));
            }
            None => {
                return Err(malformed(
                    "/swagger",
                    "missing: this is not a swagger 2.0 document",
                ));
            }
        }
        let info = root.get("info").and_then(Value::as_object);
        let title = info
            .and_then(|i| i.get("title"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let raw_version = info
            .and_then(|i| i.get("version"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let version = if raw_version.is_empty() || TEMPLATE_VERSIONS.contains(&raw_version.as_str())
        {
            "unknown".to_string()
        } else {
            raw_version
        };
        let mut base_path = root
            .get("basePath")
            .and_then(Value::as_str)
            .unwrap_or("/api/v1")
            .to_string();
        for placeholder in TEMPLATE_SUBURLS {
            base_path = base_path.replace(placeholder, "");
        }
        let flavor =
            if version.contains("+gitea-") || title.to_ascii_lowercase().contains("forgejo") {
                Flavor::Forgejo
            } else {
                Flavor::Gitea
            };
        let global_consumes = string_list(root.get("consumes"), "/consumes")?;
        let global_produces = string_list(root.get("produces"), "/produces")?;
        let definitions = match root.get("definitions") {
            None => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(malformed("/definitions", "expected an object")),
        };
        // Body schemas are checked where they are declared; the definitions they reach are
        // copied into input schemas too, so their refs must be local and resolve as well.
        for (name, def) in &definitions {
            check_refs(
                def,
                &format!("/definitions/{}", pointer_token(name)),
                &definitions,
            )?;
        }
        let shared_params = root.get("parameters").and_then(Value::as_object);
        let shared_responses = root.get("responses").and_then(Value::as_object);
        let paths = root
            .get("paths")
            .ok_or_else(|| malformed("/paths", "missing"))?
            .as_object()
            .ok_or_else(|| malformed("/paths", "expected an object"))?;

        let ctx = Context {
            shared_params,
            shared_responses,
            definitions: &definitions,
        };
        let mut operations = Vec::new();
        let mut seen_ids: BTreeMap<String, String> = BTreeMap::new();
        for (path, item) in paths {
            let item_ptr = format!("/paths/{}", pointer_token(path));
            if !path.starts_with('/') {
                return Err(malformed(&item_ptr, "a path must start with '/'"));
            }
            let item = item
                .as_object()
                .ok_or_else(|| malformed(&item_ptr, "expected an object"))?;
            let path_params = match item.get("parameters") {
                Some(p) => ctx.parameters(p, &format!("{item_ptr}/parameters"))?,
                None => Vec::new(),
            };
            for (key, op) in item {
                let Some(method) = HttpMethod::from_swagger_key(key) else {
                    continue;
                };
                let ptr = format!("{item_ptr}/{key}");
                let op = ctx.operation(
                    path,
                    method,
                    op,
                    &ptr,
                    &path_params,
                    &global_consumes,
                    &global_produces,
                )?;
                if let Some(previous) = seen_ids.insert(op.operation_id.clone(), ptr.clone()) {
                    return Err(malformed(
                        &format!("{ptr}/operationId"),
                        format!(
                            "operationId {:?} is also used at {previous}",
                            op.operation_id
                        ),
                    ));
                }
                operations.push(op);
            }
        }
        operations.sort_by(|a, b| (&a.path, a.method).cmp(&(&b.path, b.method)));
        Ok(Spec {
            sha256,
            title,
            version,
            base_path,
            flavor,
            operations,
            definitions,
        })
    }
}

struct Context<'a> {
    shared_params: Option<&'a Map<String, Value>>,
    shared_responses: Option<&'a Map<String, Value>>,
    definitions: &'a Map<String, Value>,
}

impl Context<'_> {
    #[allow(clippy::too_many_arguments)]
    fn operation(
        &self,
        path: &str,
        method: HttpMethod,
        op: &Value,
        ptr: &str,
        path_params: &[Parameter],
        global_consumes: &[String],
        global_produces: &[String],
    ) -> Result<Operation, Error> {
        let obj = op
            .as_object()
            .ok_or_else(|| malformed(ptr, "expected an object"))?;
        let operation_id = obj
            .get("operationId")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| malformed(&format!("{ptr}/operationId"), "missing or not a string"))?
            .to_string();
        if !operation_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(malformed(
                &format!("{ptr}/operationId"),
                format!("{operation_id:?} must be ASCII letters, digits, '_' or '-'"),
            ));
        }
        let text = |key: &str| {
            obj.get(key)
                .and_then(Value::as_str)
                .map(clean_text)
                .unwrap_or_default()
        };
        let mut parameters: Vec<Parameter> = path_params.to_vec();
        if let Some(p) = obj.get("parameters") {
            for param in self.parameters(p, &format!("{ptr}/parameters"))? {
                // An operation-level parameter overrides a path-level one of the same name and place.
                parameters.retain(|q| !(q.name == param.name && q.location == param.location));
                parameters.push(param);
            }
        }
        for name in template_names(path) {
            let found = parameters
                .iter_mut()
                .find(|p| p.location == ParamLocation::Path && p.name == name);
            match found {
                Some(p) => p.required = true,
                None => {
                    return Err(malformed(
                        &format!("{ptr}/parameters"),
                        format!("path parameter {{{name}}} of {path} is not declared"),
                    ));
                }
            }
        }
        if let Some(p) = parameters.iter().find(|p| {
            p.location == ParamLocation::Path && !template_names(path).any(|n| n == p.name)
        }) {
            return Err(malformed(
                &format!("{ptr}/parameters"),
                format!("path parameter {:?} does not appear in {path}", p.name),
            ));
        }
        let consumes = match obj.get("consumes") {
            Some(v) => string_list(Some(v), &format!("{ptr}/consumes"))?,
            None => global_consumes.to_vec(),
        };
        let produces = match obj.get("produces") {
            Some(v) => string_list(Some(v), &format!("{ptr}/produces"))?,
            None => global_produces.to_vec(),
        };
        let tags = string_list(obj.get("tags"), &format!("{ptr}/tags"))?;
        let responses = obj.get("responses").and_then(Value::as_object);
        let response = self.response_kind(responses, &produces);
        let returns_list = self.returns_list(responses);
        let no_content = responses.is_some_and(|rs| {
            let mut success = rs.keys().filter(|code| code.starts_with('2')).peekable();
            success.peek().is_some() && success.all(|code| code == "204")
        });
        let response_definition = self.response_definition(responses);
        Ok(Operation {
            method,
            path: path.to_string(),
            operation_id,
            summary: text("summary"),
            description: text("description"),
            tags,
            parameters,
            consumes,
            produces,
            deprecated: obj
                .get("deprecated")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            response,
            returns_list,
            no_content,
            response_definition,
            digest: crate::digest::sha256_hex(op.to_string().as_bytes()),
        })
    }

    fn parameters(&self, list: &Value, ptr: &str) -> Result<Vec<Parameter>, Error> {
        let items = list
            .as_array()
            .ok_or_else(|| malformed(ptr, "expected an array"))?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let iptr = format!("{ptr}/{i}");
            let item = match item.get("$ref").and_then(Value::as_str) {
                Some(r) => {
                    let name = r.strip_prefix("#/parameters/").ok_or_else(|| {
                        malformed(
                            &format!("{iptr}/$ref"),
                            format!("unsupported reference {r:?}"),
                        )
                    })?;
                    self.shared_params
                        .and_then(|m| m.get(name))
                        .ok_or_else(|| {
                            malformed(&format!("{iptr}/$ref"), format!("{r:?} does not resolve"))
                        })?
                }
                None => item,
            };
            out.push(parameter(item, &iptr, self.definitions)?);
        }
        Ok(out)
    }

    /// Follows a `#/responses/…` reference (Gitea names almost every response that way).
    fn resolve_response<'v>(&'v self, resp: &'v Value) -> &'v Value {
        resp.get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/responses/"))
            .and_then(|n| self.shared_responses.and_then(|m| m.get(n)))
            .unwrap_or(resp)
    }

    /// The `#/definitions/…` name of a 2xx response's schema (or of its items).
    fn response_definition(&self, responses: Option<&Map<String, Value>>) -> Option<String> {
        responses?
            .iter()
            .filter(|(code, _)| code.starts_with('2'))
            .find_map(|(_, resp)| {
                let schema = self.resolve_response(resp).get("schema")?;
                let r = schema
                    .get("$ref")
                    .or_else(|| schema.pointer("/items/$ref"))?
                    .as_str()?;
                r.strip_prefix("#/definitions/").map(str::to_string)
            })
    }

    /// True when a 2xx response's schema is an array.
    fn returns_list(&self, responses: Option<&Map<String, Value>>) -> bool {
        responses.is_some_and(|rs| {
            rs.iter()
                .filter(|(code, _)| code.starts_with('2'))
                .any(|(_, resp)| {
                    self.resolve_response(resp)
                        .pointer("/schema/type")
                        .and_then(Value::as_str)
                        == Some("array")
                })
        })
    }

    /// Classifies what a successful response carries, from the documented 2xx/3xx responses and
    /// the `produces` list.
    fn response_kind(
        &self,
        responses: Option<&Map<String, Value>>,
        produces: &[String],
    ) -> ResponseKind {
        let Some(responses) = responses else {
            return ResponseKind::Json;
        };
        let mut any_success = false;
        let mut any_redirect = false;
        let mut schema_types: Vec<Option<String>> = Vec::new();
        for (code, resp) in responses {
            let resp = self.resolve_response(resp);
            if code.starts_with('2') {
                any_success = true;
                if let Some(schema) = resp.get("schema") {
                    schema_types.push(
                        schema
                            .get("type")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    );
                }
            } else if code.starts_with('3') {
                any_redirect = true;
            }
        }
        if !any_success {
            return if any_redirect {
                ResponseKind::Redirect
            } else {
                ResponseKind::Empty
            };
        }
        if schema_types.is_empty() {
            return ResponseKind::Empty;
        }
        if schema_types.iter().any(|t| t.as_deref() == Some("file")) {
            return ResponseKind::Binary;
        }
        let json = produces.iter().any(|p| p.contains("json"));
        if json || produces.is_empty() {
            return ResponseKind::Json;
        }
        if produces.iter().any(|p| p.starts_with("text/")) {
            ResponseKind::Text
        } else {
            ResponseKind::Binary
        }
    }
}

fn parameter(
    item: &Value,
    ptr: &str,
    definitions: &Map<String, Value>,
) -> Result<Parameter, Error> {
    let obj = item
        .as_object()
        .ok_or_else(|| malformed(ptr, "expected an object"))?;
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| malformed(&format!("{ptr}/name"), "missing or not a string"))?
        .to_string();
    let location = match obj.get("in").and_then(Value::as_str) {
        Some("path") => ParamLocation::Path,
        Some("query") => ParamLocation::Query,
        Some("header") => ParamLocation::Header,
        Some("body") => ParamLocation::Body,
        Some("formData") => ParamLocation::FormData,
        other => {
            return Err(malformed(
                &format!("{ptr}/in"),
                format!("expected path, query, header, body or formData, found {other:?}"),
            ));
        }
    };
    let description = obj
        .get("description")
        .and_then(Value::as_str)
        .map(clean_text)
        .unwrap_or_default();
    let required = obj
        .get("required")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let collection_format = match obj.get("collectionFormat").and_then(Value::as_str) {
        None => None,
        Some("csv") => Some(CollectionFormat::Csv),
        Some("multi") => Some(CollectionFormat::Multi),
        Some("ssv") => Some(CollectionFormat::Ssv),
        Some("tsv") => Some(CollectionFormat::Tsv),
        Some("pipes") => Some(CollectionFormat::Pipes),
        Some(other) => {
            return Err(malformed(
                &format!("{ptr}/collectionFormat"),
                format!("unsupported collection format {other:?}"),
            ));
        }
    };
    let mut is_file = false;
    let schema = if location == ParamLocation::Body {
        let schema = obj.get("schema").ok_or_else(|| {
            malformed(&format!("{ptr}/schema"), "a body parameter needs a schema")
        })?;
        check_refs(schema, &format!("{ptr}/schema"), definitions)?;
        schema.clone()
    } else {
        let ty = obj.get("type").and_then(Value::as_str).ok_or_else(|| {
            malformed(&format!("{ptr}/type"), "a non-body parameter needs a type")
        })?;
        if ty == "file" {
            if location != ParamLocation::FormData {
                return Err(malformed(
                    &format!("{ptr}/type"),
                    "type file is only allowed in formData",
                ));
            }
            is_file = true;
        }
        if ty == "array" && !obj.contains_key("items") {
            return Err(malformed(
                &format!("{ptr}/items"),
                "an array parameter needs items",
            ));
        }
        simple_schema(obj)
    };
    Ok(Parameter {
        name,
        location,
        required,
        description,
        schema,
        collection_format,
        is_file,
    })
}

/// The JSON Schema keywords a non-body swagger parameter shares with JSON Schema.
const SCHEMA_KEYS: [&str; 12] = [
    "type",
    "format",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "uniqueItems",
];

fn simple_schema(obj: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    for key in SCHEMA_KEYS {
        if let Some(v) = obj.get(key) {
            out.insert(key.to_string(), v.clone());
        }
    }
    if let Some(Value::Object(items)) = obj.get("items") {
        out.insert("items".to_string(), simple_schema(items));
    }
    Value::Object(out)
}

/// Checks that every `$ref` under `node` points into `#/definitions/` and resolves.
pub(crate) fn check_refs(
    node: &Value,
    ptr: &str,
    definitions: &Map<String, Value>,
) -> Result<(), Error> {
    match node {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref") {
                let r = r
                    .as_str()
                    .ok_or_else(|| malformed(&format!("{ptr}/$ref"), "expected a string"))?;
                let name = r.strip_prefix("#/definitions/").ok_or_else(|| {
                    malformed(
                        &format!("{ptr}/$ref"),
                        format!("unsupported reference {r:?}"),
                    )
                })?;
                if !definitions.contains_key(name) {
                    return Err(malformed(
                        &format!("{ptr}/$ref"),
                        format!("{r:?} does not resolve"),
                    ));
                }
            }
            for (k, v) in map {
                check_refs(v, &format!("{ptr}/{}", pointer_token(k)), definitions)?;
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                check_refs(v, &format!("{ptr}/{i}"), definitions)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn string_list(v: Option<&Value>, ptr: &str) -> Result<Vec<String>, Error> {
    match v {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| malformed(&format!("{ptr}/{i}"), "expected a string"))
            })
            .collect(),
        Some(_) => Err(malformed(ptr, "expected an array of strings")),
    }
}

/// The `{name}` placeholders of a path template, in order.
pub fn template_names(path: &str) -> impl Iterator<Item = &str> {
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
}

/// Removes control characters (keeping newlines and tabs as spaces where they matter) and trims.
pub fn clean_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\n' {
            out.push('\n');
        } else if c == '\t' {
            out.push(' ');
        } else if !c.is_control() && !is_bidi_control(c) {
            out.push(c);
        }
    }
    out.trim().to_string()
}

/// Bidirectional overrides can make text read differently to a human and to a model.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

/// Operations added, removed and changed between two documents, keyed by operationId.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpecDiff {
    /// Present only in the newer document.
    pub added: Vec<String>,
    /// Present only in the older document.
    pub removed: Vec<String>,
    /// Present in both, with a different method, path or definition.
    pub changed: Vec<String>,
}

impl SpecDiff {
    /// Compares `old` with `new`.
    pub fn between(old: &Spec, new: &Spec) -> SpecDiff {
        let index = |s: &Spec| -> BTreeMap<String, (String, String)> {
            s.operations
                .iter()
                .map(|o| {
                    let key = format!("{} {}", o.method, o.path);
                    (o.operation_id.clone(), (key, o.digest.clone()))
                })
                .collect()
        };
        let (a, b) = (index(old), index(new));
        let mut diff = SpecDiff::default();
        for (id, v) in &b {
            match a.get(id) {
                None => diff.added.push(id.clone()),
                Some(w) if w != v => diff.changed.push(id.clone()),
                Some(_) => {}
            }
        }
        diff.removed = a
            .keys()
            .filter(|id| !b.contains_key(*id))
            .cloned()
            .collect();
        diff
    }

    /// True when the two documents describe the same operations.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Spec, Error> {
        Spec::parse(v.to_string().as_bytes())
    }

    fn minimal(paths: Value) -> Value {
        json!({"swagger": "2.0", "info": {"title": "Gitea API", "version": "{{.SwaggerAppVer}}"},
               "basePath": "{{.SwaggerAppSubUrl}}/api/v1", "paths": paths, "definitions": {}})
    }

    #[test]
    fn template_placeholders_are_filled() {
        let spec = parse(minimal(json!({}))).unwrap();
        assert_eq!(spec.version, "unknown");
        assert_eq!(spec.base_path, "/api/v1");
        let mut doc = minimal(json!({}));
        doc["info"]["version"] = json!("0.0.0+GITEA-API-APP-VERSION");
        doc["basePath"] = json!("/GITEA-API-APP-SUBURL/api/v1");
        let spec = parse(doc).unwrap();
        assert_eq!(
            (spec.version.as_str(), spec.base_path.as_str()),
            ("unknown", "/api/v1")
        );
    }

    #[test]
    fn forgejo_is_recognised_by_its_version_suffix() {
        let mut doc = minimal(json!({}));
        doc["info"]["version"] = json!("17.0.0-dev+gitea-1.22.0");
        assert_eq!(parse(doc).unwrap().flavor, Flavor::Forgejo);
    }

    #[test]
    fn errors_name_the_json_pointer() {
        let cases = [
            (
                json!({"/a/{x}": {"get": {"operationId": "a", "responses": {}}}}),
                "/paths/~1a~1{x}/get/parameters",
            ),
            (
                json!({"/a": {"get": {"responses": {}}}}),
                "/paths/~1a/get/operationId",
            ),
            (
                json!({"/a": {"get": {"operationId": "a", "parameters": [{"name": "q"}]}}}),
                "/paths/~1a/get/parameters/0/in",
            ),
            (
                json!({"/a": {"post": {"operationId": "a", "parameters": [{"name": "b", "in": "body", "schema": {"$ref": "#/definitions/Nope"}}]}}}),
                "/paths/~1a/post/parameters/0/schema/$ref",
            ),
            (json!({"/a": "x"}), "/paths/~1a"),
        ];
        for (paths, pointer) in cases {
            match parse(minimal(paths.clone())) {
                Err(Error::Malformed { pointer: p, .. }) => assert_eq!(p, pointer, "{paths}"),
                other => panic!("expected a malformed error for {paths}, got {other:?}"),
            }
        }
    }

    #[test]
    fn not_json_reports_line_and_column() {
        match Spec::parse(b"{\n  \"swagger\": ") {
            Err(Error::Json { line, .. }) => assert_eq!(line, 2),
            other => panic!("{other:?}"),
        }
        assert!(matches!(Spec::parse(b"[]"), Err(Error::Malformed { .. })));
        assert!(matches!(
            Spec::parse(br#"{"openapi": "3.0.0"}"#),
            Err(Error::Malformed { .. })
        ));
    }

    #[test]
    fn duplicate_operation_ids_are_refused() {
        let paths =
            json!({"/a": {"get": {"operationId": "x"}}, "/b": {"get": {"operationId": "x"}}});
        let err = parse(minimal(paths)).unwrap_err().to_string();
        assert!(err.contains("also used at /paths/~1a/get"), "{err}");
    }

    #[test]
    fn control_characters_are_stripped() {
        assert_eq!(clean_text(" a\u{0007}b\u{202E}c\td\n "), "abc d");
    }

    #[test]
    fn response_kinds() {
        let paths = json!({
            "/j": {"get": {"operationId": "j", "responses": {"200": {"schema": {"type": "object"}}}}},
            "/t": {"get": {"operationId": "t", "produces": ["text/plain"], "responses": {"200": {"schema": {"type": "string"}}}}},
            "/b": {"get": {"operationId": "b", "produces": ["application/octet-stream"], "responses": {"200": {"schema": {"type": "file"}}}}},
            "/r": {"get": {"operationId": "r", "responses": {"302": {"description": "x"}}}},
            "/e": {"delete": {"operationId": "e", "responses": {"204": {"description": "x"}}}},
        });
        let spec = parse(minimal(paths)).unwrap();
        let kinds: Vec<_> = spec
            .operations
            .iter()
            .map(|o| (o.operation_id.as_str(), o.response))
            .collect();
        assert_eq!(
            kinds,
            [
                ("b", ResponseKind::Binary),
                ("e", ResponseKind::Empty),
                ("j", ResponseKind::Json),
                ("r", ResponseKind::Redirect),
                ("t", ResponseKind::Text)
            ]
        );
    }

    #[test]
    fn only_a_204_answer_is_no_content() {
        let paths = json!({
            "/c": {"get": {"operationId": "c", "responses": {"204": {"description": "x"}, "404": {"description": "x"}}}},
            "/d": {"get": {"operationId": "d", "responses": {"200": {"description": "an archive"}}}},
            "/m": {"put": {"operationId": "m", "responses": {"201": {"description": "x"}, "204": {"description": "x"}}}},
            "/n": {"get": {"operationId": "n", "responses": {"404": {"description": "x"}}}},
        });
        let spec = parse(minimal(paths)).unwrap();
        let flags: Vec<_> = spec
            .operations
            .iter()
            .map(|o| (o.operation_id.as_str(), o.no_content))
            .collect();
        assert_eq!(
            flags,
            [("c", true), ("d", false), ("m", false), ("n", false)]
        );
    }

    mod mutated {
        use super::*;
        use proptest::prelude::*;

        /// Replaces (or removes) the node reached by following `choices` from the root.
        fn mutate(node: &mut Value, choices: &[usize], with: &Option<Value>) {
            let Some((c, rest)) = choices.split_first() else {
                if let Some(v) = with {
                    *node = v.clone();
                }
                return;
            };
            match node {
                Value::Object(m) if !m.is_empty() => {
                    let key = m.keys().nth(c % m.len()).cloned().unwrap_or_default();
                    if rest.is_empty() && with.is_none() {
                        m.remove(&key);
                    } else if let Some(child) = m.get_mut(&key) {
                        mutate(child, rest, with);
                    }
                }
                Value::Array(items) if !items.is_empty() => {
                    let i = c % items.len();
                    if rest.is_empty() && with.is_none() {
                        items.remove(i);
                    } else {
                        mutate(&mut items[i], rest, with);
                    }
                }
                other => {
                    if let Some(v) = with {
                        *other = v.clone();
                    }
                }
            }
        }

        fn fixture() -> Value {
            serde_json::from_slice(&std::fs::read(crate::testing::FIXTURE).unwrap()).unwrap()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(64)))]

            /// A document mutated anywhere (a node replaced by any JSON, or removed) loads or is
            /// refused with an error naming where; whatever loads builds a catalog or is
            /// refused; nothing panics.
            #[test]
            fn mutated_documents_never_panic(
                edits in proptest::collection::vec(
                    (proptest::collection::vec(any::<usize>(), 1..7),
                     proptest::option::of(crate::testing::json())),
                    1..4),
            ) {
                let mut doc = fixture();
                for (choices, with) in &edits {
                    mutate(&mut doc, choices, with);
                }
                match Spec::parse(doc.to_string().as_bytes()) {
                    Ok(spec) => {
                        let _ = crate::catalog::Catalog::build(&spec);
                    }
                    Err(e) => prop_assert!(!e.to_string().is_empty()),
                }
            }

            /// Truncated or byte-flipped documents are refused (or load), never a panic.
            #[test]
            fn damaged_bytes_never_panic(cut in any::<usize>(), flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8)) {
                let mut bytes = std::fs::read(crate::testing::FIXTURE).unwrap();
                for (i, b) in flips {
                    let n = bytes.len();
                    bytes[i % n] = b;
                }
                bytes.truncate(cut % (bytes.len() + 1));
                if let Ok(spec) = Spec::parse(&bytes) {
                    let _ = crate::catalog::Catalog::build(&spec);
                }
            }
        }
    }
}
