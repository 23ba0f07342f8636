//! Resources as the client receives them: the blocks of a read (scrubbed and bounded), and
//! errors as MCP errors with the code a client acts on and the sentence it shows.

use rmcp::ErrorData;
use rmcp::model::{ErrorCode, ReadResourceResult, ResourceContents};
use serde_json::Value;

use crate::exec::Refusal;
use crate::outbound::{self, Secrets};
use crate::policy::WithheldReason;

const JSON: &str = "application/json";
const MARKDOWN: &str = "text/markdown";

/// Why a resource could not be read.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceError {
    /// Not a `gitea://` URI, or one that names no resource (-32002).
    NoResource {
        /// The URI (clipped).
        uri: String,
    },
    /// A malformed URI or parameter (-32602), before any request.
    Malformed {
        /// What is wrong.
        why: String,
    },
    /// No action of that name (-32002).
    NoAction {
        /// The name (clipped).
        name: String,
    },
    /// The template needs operations this document lacks (-32002).
    Unavailable {
        /// The template.
        template: &'static str,
        /// The operations missing.
        missing: Vec<&'static str>,
    },
    /// The policy withholds an action the resource reads (-32600).
    Withheld {
        /// The action.
        target: String,
        /// Why.
        reason: WithheldReason,
    },
    /// Gitea answered 404 (-32003).
    NotFound {
        /// Gitea's message.
        message: String,
    },
    /// The comment exists but belongs to another issue (-32003).
    NotOfIssue {
        /// The comment id.
        id: u64,
        /// The issue index in the URI.
        index: u64,
        /// `owner/repo`.
        repo: String,
    },
    /// Any other failure reading from Gitea (-32603).
    Upstream(Box<Refusal>),
}

/// What a resource read produced, before it is scrubbed, bounded and wrapped: the JSON block
/// and, for entities with a body, the body as Markdown.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    json: Value,
    markdown: Option<String>,
}

impl Read {
    /// A JSON block and an optional Markdown block.
    pub fn new(json: Value, markdown: Option<String>) -> Read {
        Read { json, markdown }
    }

    /// Scrubs `secrets` and fits both blocks into `max` bytes together (the Markdown, a copy of
    /// the body, gives way first).
    pub fn finish(&mut self, secrets: &Secrets, max: usize) {
        secrets.scrub_value(&mut self.json);
        if let Some(md) = &mut self.markdown {
            if let std::borrow::Cow::Owned(clean) = secrets.scrub_str(md) {
                *md = clean;
            }
        }
        let md_len = self.markdown.as_ref().map_or(0, String::len);
        if outbound::json_len(&self.json) + md_len > max {
            if let Some(md) = &mut self.markdown {
                let room = max
                    .saturating_sub(outbound::json_len(&self.json))
                    .max(max / 4);
                outbound::cut(md, room, "\n\n[cut to fit MAX_RESPONSE_BYTES]");
            }
            let md_len = self.markdown.as_ref().map_or(0, String::len);
            outbound::fit_value(&mut self.json, max.saturating_sub(md_len));
        }
    }

    /// The MCP result.
    pub fn into_result(self, uri: &str) -> ReadResourceResult {
        let mut contents =
            vec![ResourceContents::text(self.json.to_string(), uri).with_mime_type(JSON)];
        if let Some(md) = self.markdown {
            contents.push(ResourceContents::text(md, uri).with_mime_type(MARKDOWN));
        }
        ReadResourceResult::new(contents)
    }
}

/// Error code for an entity the instance does not have (or the token cannot see).
pub const UPSTREAM_NOT_FOUND: i32 = -32003;

/// The JSON-RPC code of a resource error.
pub fn error_code(e: &ResourceError) -> i32 {
    match e {
        ResourceError::NoResource { .. }
        | ResourceError::NoAction { .. }
        | ResourceError::Unavailable { .. } => ErrorCode::RESOURCE_NOT_FOUND.0,
        ResourceError::Malformed { .. } => ErrorCode::INVALID_PARAMS.0,
        ResourceError::Withheld { .. } => ErrorCode::INVALID_REQUEST.0,
        ResourceError::NotFound { .. } | ResourceError::NotOfIssue { .. } => UPSTREAM_NOT_FOUND,
        ResourceError::Upstream(_) => ErrorCode::INTERNAL_ERROR.0,
    }
}

/// The MCP error for a resource error.
pub fn error(e: &ResourceError) -> ErrorData {
    let (message, data) = match e {
        ResourceError::NoResource { uri } => (
            format!("no resource at {uri:?}; see resources/templates/list"),
            None,
        ),
        ResourceError::Malformed { why } => (why.clone(), None),
        ResourceError::NoAction { name } => (format!("no action named {name:?}"), None),
        ResourceError::Unavailable { template, missing } => (
            format!(
                "{template} is not available: this instance's API description has no {}",
                missing.join(", ")
            ),
            None,
        ),
        ResourceError::Withheld { target, reason } => (
            super::call::withheld_text(target, reason),
            Some(super::call::withheld_json(reason)),
        ),
        ResourceError::NotFound { message } => (
            format!("not found on the Gitea instance: Gitea answered 404: {message}"),
            None,
        ),
        ResourceError::NotOfIssue { id, index, repo } => (
            format!("comment {id} does not belong to issue {index} of {repo}"),
            None,
        ),
        ResourceError::Upstream(refusal) => {
            let out = super::call::render(&Err((**refusal).clone()), 0);
            let first = out.text.lines().next().unwrap_or("").to_string();
            (first, out.structured.get("error").cloned())
        }
    };
    ErrorData::new(ErrorCode(error_code(e)), message, data)
}
