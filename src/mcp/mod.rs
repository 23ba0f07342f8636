//! The MCP server: tools and resources over any transport. (MCP logging is not offered: it
//! is deprecated by SEP-2577; logs go to stderr.)
//!
//! One [`Server`] serves every transport (stdio, streamable HTTP); the transports only choose
//! how bytes move. The heavy state (catalog, index, validators, HTTP client) is built once and
//! shared through an `Arc`; a session costs one clone of that pointer.
//!
//! Surfaces: the *dynamic* surface offers three tools (find, execute, raw request); the
//! *individual* surface offers one tool per allowed action, projected from the same catalog and
//! policy; *both* offers both. Unknown tools answer with an `isError` result, never a protocol
//! error, so clients show the message to the model.

pub mod http;
mod resources;

use std::str::FromStr;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::app::State;
use crate::audit::{AuditLog, Entry, Facts, OutcomeKind};
use crate::config::Secret;
use crate::exec::{Call, Context};
use crate::tools::{self, ToolOutput};

/// Which tools the server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Three tools: find, execute, raw request.
    Dynamic,
    /// One tool per allowed action.
    Individual,
    /// Both sets.
    Both,
}

impl FromStr for Surface {
    type Err = String;

    fn from_str(s: &str) -> Result<Surface, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "dynamic" => Ok(Surface::Dynamic),
            "individual" => Ok(Surface::Individual),
            "both" => Ok(Surface::Both),
            other => Err(format!(
                "unknown surface {other:?}: use dynamic, individual or both"
            )),
        }
    }
}

/// What a client is told about using this server, in a few lines.
pub const INSTRUCTIONS: &str = "This server reaches the whole Gitea API through actions.\n\
1. Call gitea_find_action with what you want to do in plain words; it returns action names, \
their required arguments and the top action's input schema.\n\
2. Call gitea_execute_action with {\"action\": <name>, \"arguments\": {...}}.\n\
Results with isError are feedback: read them, fix the arguments and call again. Destructive \
actions first answer with a preview and a confirm token; repeat the same call with \"confirm\" \
to proceed. Lists are paged: the answer gives the arguments for the next page.";

/// Everything a session needs, shared by all sessions.
#[derive(Debug)]
pub struct Shared {
    /// Catalog, policy, index, validators.
    pub state: State,
    /// The executor (client, settings, confirmations).
    pub exec: Context,
    /// The offered surface.
    pub surface: Surface,
    /// The audit log, if configured.
    pub audit: Option<AuditLog>,
    tools: Vec<Tool>,
}

/// Who made a call and how it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOrigin {
    /// API-key label, Gitea user, or `local`.
    pub actor: String,
    /// `stdio`, `http` (MCP over HTTP) or `rest` (`POST /mcp/tool/call`).
    pub transport: &'static str,
    /// The caller's own Gitea token (pass-through mode); `None` uses the server's.
    pub token: Option<Secret>,
}

impl CallOrigin {
    /// A local caller (stdio, CLI) using the server's token.
    pub fn local(transport: &'static str) -> CallOrigin {
        CallOrigin {
            actor: "local".into(),
            transport,
            token: None,
        }
    }
}

/// The caller's Gitea token, put into the request's extensions by the gateway in pass-through
/// mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GiteaToken(pub Secret);

/// The authenticated caller of an HTTP request, put into the request's extensions by the
/// gateway. Never holds a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor(pub String);

/// The MCP server (cheap to clone: one `Arc`).
#[derive(Debug, Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

impl Server {
    /// A server over `state` and `exec`, offering `surface`, recording calls in `audit`.
    pub fn new(state: State, exec: Context, surface: Surface, audit: Option<AuditLog>) -> Server {
        let tools = tool_list(&state, &exec, surface);
        Server {
            shared: Arc::new(Shared {
                state,
                exec,
                surface,
                audit,
                tools,
            }),
        }
    }

    /// The shared state.
    pub fn shared(&self) -> &Shared {
        &self.shared
    }

    /// The tools of the configured surface.
    pub fn tools(&self) -> &[Tool] {
        &self.shared.tools
    }

    /// Calls a tool and records the call in the audit log: the one entry point behind MCP
    /// `tools/call` (stdio and HTTP) and the gateway's `POST /mcp/tool/call`. `None` when no
    /// such tool is offered (also recorded).
    pub async fn call(
        &self,
        name: &str,
        arguments: Value,
        origin: &CallOrigin,
    ) -> Option<ToolOutput> {
        let started = std::time::Instant::now();
        // Digest of the arguments with secret values masked (a weak password must not be
        // confirmable by hashing guesses against the log); computed only when there is a log.
        let digest =
            self.shared.audit.as_ref().map(|_| {
                crate::exec::confirm::digest(name, &crate::exec::redact(&arguments, true))
            });
        let out = match &origin.token {
            Some(token) => {
                let exec = self
                    .shared
                    .exec
                    .for_caller(&origin.actor, Some(token.clone()));
                self.dispatch(name, arguments, &exec).await
            }
            None => self.dispatch(name, arguments, &self.shared.exec).await,
        };
        let outcome = out
            .as_ref()
            .map_or("unknown_tool", |o| o.facts.kind.label());
        crate::metrics::global().tool_call(name, outcome);
        if let Some(log) = &self.shared.audit {
            let unknown = Facts {
                kind: OutcomeKind::Denied("unknown_tool".into()),
                ..Facts::default()
            };
            log.record(&Entry {
                actor: &origin.actor,
                transport: origin.transport,
                tool: name,
                args_digest: digest.as_deref().unwrap_or_default(),
                facts: out.as_ref().map_or(&unknown, |o| &o.facts),
                duration_ms: started.elapsed().as_millis() as u64,
            });
        }
        out
    }

    /// Calls a tool by name with the server's token, without recording it. `None` when no such
    /// tool is offered.
    pub async fn call_tool_by_name(&self, name: &str, arguments: Value) -> Option<ToolOutput> {
        self.dispatch(name, arguments, &self.shared.exec).await
    }

    async fn dispatch(&self, name: &str, arguments: Value, exec: &Context) -> Option<ToolOutput> {
        let s = &self.shared;
        let dynamic = matches!(s.surface, Surface::Dynamic | Surface::Both);
        let individual = matches!(s.surface, Surface::Individual | Surface::Both);
        Some(match name {
            tools::find::NAME if dynamic => tools::find::run(&s.state, &arguments),
            tools::execute::NAME if dynamic => {
                tools::execute::run(&s.state, exec, &arguments).await
            }
            tools::raw::NAME if dynamic && s.exec.config.raw_requests => {
                tools::raw::run(&s.state, exec, &arguments).await
            }
            _ if individual && s.tools.iter().any(|t| t.name == name) => {
                let null = Value::Null;
                let args = if arguments.is_null() {
                    &null
                } else {
                    &arguments
                };
                // Individual tools take the action's arguments directly; dry_run and confirm
                // ride along as reserved keys.
                let (args, dry_run, confirm) = split_reserved(args);
                let call = Call {
                    action: name,
                    arguments: &args,
                    dry_run,
                    confirm: confirm.as_deref(),
                };
                crate::exec::call(s.state.exec_env(), exec, &call)
                    .await
                    .into()
            }
            _ => return None,
        })
    }

    fn unknown_tool(&self, name: &str) -> ToolOutput {
        let names: Vec<&str> = self
            .shared
            .tools
            .iter()
            .take(5)
            .map(|t| t.name.as_ref())
            .collect();
        ToolOutput::error(
            format!(
                "unknown tool {name:?}. This server offers {}{}. To run a Gitea action, call gitea_find_action, then gitea_execute_action.",
                names.join(", "),
                if self.shared.tools.len() > 5 {
                    ", …"
                } else {
                    ""
                }
            ),
            json!({"code": "unknown_tool"}),
        )
    }
}

/// Splits `dry_run` and `confirm` off an individual tool's arguments.
fn split_reserved(args: &Value) -> (Value, bool, Option<String>) {
    let mut map = args.as_object().cloned().unwrap_or_default();
    let dry_run = map
        .remove("dry_run")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let confirm = map
        .remove("confirm")
        .and_then(|v| v.as_str().map(str::to_string));
    if args.is_object() {
        (Value::Object(map), dry_run, confirm)
    } else {
        (args.clone(), dry_run, confirm)
    }
}

fn object(v: Value) -> Arc<Map<String, Value>> {
    Arc::new(match v {
        Value::Object(m) => m,
        _ => Map::new(),
    })
}

/// The tool list of a surface, computed once.
fn tool_list(state: &State, exec: &Context, surface: Surface) -> Vec<Tool> {
    let read_only = state.policy.is_read_only();
    let any_destructive = state
        .catalog
        .actions()
        .iter()
        .enumerate()
        .any(|(i, a)| a.annotations.destructive && state.policy.decision(i).is_allowed());
    let mut out = Vec::new();
    if matches!(surface, Surface::Dynamic | Surface::Both) {
        out.push(
            Tool::new(
                tools::find::NAME,
                tools::find::DESCRIPTION,
                object(tools::find::input_schema()),
            )
            .with_annotations(ToolAnnotations::from_raw(
                Some("Find a Gitea action".into()),
                Some(true),
                Some(false),
                Some(true),
                Some(false),
            )),
        );
        let writes = |title: &str| {
            ToolAnnotations::from_raw(
                Some(title.to_string()),
                Some(read_only),
                Some(!read_only && any_destructive),
                Some(false),
                Some(true),
            )
        };
        out.push(
            Tool::new(
                tools::execute::NAME,
                tools::execute::DESCRIPTION,
                object(tools::execute::input_schema()),
            )
            .with_annotations(writes("Run a Gitea action")),
        );
        if exec.config.raw_requests {
            out.push(
                Tool::new(
                    tools::raw::NAME,
                    tools::raw::DESCRIPTION,
                    object(tools::raw::input_schema()),
                )
                .with_annotations(writes("Raw Gitea API request")),
            );
        }
    }
    if matches!(surface, Surface::Individual | Surface::Both) {
        for (i, a) in state.catalog.actions().iter().enumerate() {
            if !state.policy.decision(i).is_allowed() {
                continue;
            }
            let mut description = format!("{} ({} {})", a.summary, a.method, a.path);
            if a.deprecated {
                description.push_str(" [deprecated]");
            }
            if a.annotations.destructive {
                description.push_str(" Destructive: answers with a confirm token first.");
            }
            out.push(
                Tool::new(
                    a.name.to_string(),
                    description,
                    object((*a.input_schema).clone()),
                )
                .with_annotations(ToolAnnotations::from_raw(
                    None,
                    Some(a.annotations.read_only),
                    Some(a.annotations.destructive),
                    Some(a.annotations.idempotent),
                    Some(true),
                )),
            );
        }
    }
    out
}

/// Who calls, from the request context: the gateway's identity over HTTP, `local` over stdio.
fn origin_of(context: &RequestContext<RoleServer>) -> CallOrigin {
    match context.extensions.get::<axum::http::request::Parts>() {
        Some(parts) => CallOrigin {
            actor: parts
                .extensions
                .get::<Actor>()
                .map_or_else(|| "anonymous".to_string(), |a| a.0.clone()),
            transport: "http",
            token: parts.extensions.get::<GiteaToken>().map(|t| t.0.clone()),
        },
        None => CallOrigin::local("stdio"),
    }
}

/// MCP result from a tool's output: text content plus structured content.
pub fn call_result(out: ToolOutput) -> CallToolResult {
    let mut r = if out.is_error {
        CallToolResult::error(vec![ContentBlock::text(out.text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(out.text)])
    };
    if out.structured.is_object() {
        r.structured_content = Some(out.structured);
    }
    r
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "aegis-gitea-mcp",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.shared.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let span = tracing::info_span!("tool_call", tool = %name);
        let _enter = span.enter();
        let origin = origin_of(&context);
        let out = match self.call(&name, args, &origin).await {
            Some(out) => out,
            None => self.unknown_tool(&name),
        };
        tracing::info!(is_error = out.is_error, "tool call answered");
        Ok(call_result(out).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources::list()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::available_templates(&self.shared.state.catalog),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let started = std::time::Instant::now();
        let result = resources::read(&self.shared, &request.uri).await;
        if let Some(log) = &self.shared.audit {
            let origin = origin_of(&context);
            let kind = match &result {
                Ok(_) => OutcomeKind::Ok,
                Err(e) if e.message.contains("withheld") => OutcomeKind::Denied("policy".into()),
                Err(_) => OutcomeKind::Error,
            };
            let facts = Facts {
                kind,
                ..Facts::default()
            };
            // The URI names what was read; it carries no secret (names and numbers only).
            let digest = crate::spec::sha256_hex(request.uri.as_bytes());
            log.record(&Entry {
                actor: &origin.actor,
                transport: origin.transport,
                tool: "resources/read",
                args_digest: &digest,
                facts: &facts,
                duration_ms: started.elapsed().as_millis() as u64,
            });
        }
        result.map(Into::into)
    }
}

/// Serves MCP over stdio until the client closes the stream.
pub async fn serve_stdio(server: Server) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt;
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(format!("MCP initialisation failed: {e}")))?;
    running
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(())
}
