//! `gitea_api_request`: a raw call under `/api/v1`, held to the same policy as the actions.

use serde_json::{Map, Value, json};

use super::{ToolOutput, call_flags, str_arg};
use crate::exec::{self, Caller, Context, RawCall};
use crate::render;
use crate::state::State;

/// The tool's name.
pub const NAME: &str = "gitea_api_request";

/// The tool's description.
pub const DESCRIPTION: &str = "Send a raw request to this Gitea's /api/v1 (for endpoints \
the catalog lacks). The same policy applies: withheld operations stay withheld.";

/// The tool's input schema.
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH", "DELETE"]},
            "path": {"type": "string", "description": "Path under /api/v1, e.g. /repos/alice/demo/issues"},
            "query": {"type": "object", "description": "Query parameters"},
            "body": {"description": "JSON body"},
            "dry_run": {"type": "boolean"},
            "confirm": {"type": "string"}
        },
        "required": ["method", "path"],
        "additionalProperties": false
    })
}

/// Runs a raw request for `caller`.
pub async fn run(
    state: &State,
    ctx: &Context,
    caller: &Caller,
    mut args: Map<String, Value>,
) -> ToolOutput {
    let dry_run = match call_flags(
        &args,
        &["method", "path", "query", "body", "dry_run", "confirm"],
    ) {
        Ok(d) => d,
        Err(e) => return ToolOutput::error(e, json!({})),
    };
    let query = args.remove("query");
    let body = args.remove("body");
    let text = |key: &str| str_arg(&args, key);
    let (method, path, confirm) = match (text("method"), text("path"), text("confirm")) {
        (Ok(Some(m)), Ok(Some(p)), Ok(c)) => (m, p, c),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return ToolOutput::error(e, json!({})),
        _ => return ToolOutput::error("`method` and `path` are required", json!({})),
    };
    let call = RawCall {
        method,
        path,
        query,
        body,
        dry_run,
        confirm,
    };
    let result = exec::raw_call(state, ctx, caller, call).await;
    render::call::render(&result, render::Options::of(&ctx.config))
}
