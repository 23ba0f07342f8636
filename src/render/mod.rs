//! Every word the model reads, written in one place.
//!
//! The executor, the search and the resource reader produce facts (`exec::CallResult`, search
//! hits, entity JSON); this module turns them into the text and structured content a client
//! receives, and is the one place where every answer is scrubbed of the call's secrets and
//! fitted into `MAX_RESPONSE_BYTES` ([`finish`]). Audit facts and metric labels are conversions
//! of the same typed results (`audit::Facts::of`), not parsed back from text.

pub mod call;
pub mod card;
pub mod resource;
pub mod sanitize;

use serde_json::Value;

use crate::audit::{Facts, OutcomeKind};
use crate::outbound::{self, Secrets};

/// How an answer is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The text's share of the answer bound (a binary file's base64 goes into the text only
    /// when it fits).
    pub text_budget: usize,
    /// User-written text is sanitised ([`sanitize`]).
    pub sanitize: bool,
}

impl Options {
    /// The options of an executor's settings.
    pub fn of(config: &crate::exec::ExecConfig) -> Options {
        Options {
            text_budget: config.limits.data_budget(),
            sanitize: config.sanitize,
        }
    }
}

/// What a tool call answers.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Text for the model (compact, bounded).
    pub text: String,
    /// The same facts as JSON (`structuredContent`).
    pub structured: Value,
    /// True when the call failed in a way the model should read and fix.
    pub is_error: bool,
    /// What the audit log records about the call.
    pub facts: Facts,
    /// For a call waiting for its confirmation: the token and what to ask the person.
    pub pending: Option<Pending>,
}

/// A call waiting for its confirmation, as the MCP layer needs it to ask the person instead of
/// the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The one-use token that lets the same call through.
    pub token: String,
    /// The question for the person (what would be sent, and why it needs them).
    pub question: String,
}

/// The answer when the person declined (or dismissed) a confirmation.
pub fn declined(action: &str, cancelled: bool) -> ToolOutput {
    let (how, code) = match cancelled {
        true => ("dismissed the confirmation of", "confirmation_cancelled"),
        false => ("declined", "confirmation_declined"),
    };
    let mut out = ToolOutput::error(
        format!(
            "The person you work for {how} {action}: nothing was sent. Do not retry it unless they ask you to."
        ),
        serde_json::json!({"action": action, "code": code}),
    );
    out.facts.kind = OutcomeKind::Denied(code.into());
    out
}

/// The answer when the operator requires the person's confirmation (`CONFIRM_VIA=elicitation`)
/// and the client cannot ask (or asking failed).
pub fn cannot_ask(action: &str, why: &str) -> ToolOutput {
    let mut out = ToolOutput::error(
        format!(
            "{action} needs the confirmation of the person you work for, and this client cannot ask them ({why}); this server (CONFIRM_VIA=elicitation) refuses such calls. Nothing was sent."
        ),
        serde_json::json!({"action": action, "code": "confirmation_unavailable"}),
    );
    out.facts.kind = OutcomeKind::Denied("confirmation_unavailable".into());
    out
}

/// The code of an unknown tool in answers, metrics and audit records.
pub const UNKNOWN_TOOL: &str = "unknown_tool";

impl ToolOutput {
    /// True for the answer to a tool the server does not offer.
    pub fn is_unknown_tool(&self) -> bool {
        matches!(&self.facts.kind, OutcomeKind::Denied(code) if code == UNKNOWN_TOOL)
    }

    /// True when a destructive call waits for its confirmation.
    pub fn needs_confirmation(&self) -> bool {
        self.facts.kind == OutcomeKind::ConfirmationRequired
    }

    /// A successful answer.
    pub fn ok(text: String, structured: Value) -> ToolOutput {
        ToolOutput {
            text,
            structured,
            is_error: false,
            facts: Facts::default(),
            pending: None,
        }
    }

    /// An error the model can act on; `structured` carries `{"error": message, …}`.
    pub fn error(message: impl Into<String>, mut structured: Value) -> ToolOutput {
        let message = message.into();
        if let Value::Object(map) = &mut structured {
            map.insert("error".into(), Value::String(message.clone()));
        } else {
            structured = serde_json::json!({ "error": message });
        }
        ToolOutput {
            text: message,
            structured,
            is_error: true,
            facts: Facts {
                kind: OutcomeKind::Error,
                ..Facts::default()
            },
            pending: None,
        }
    }
}

/// The answer to a tool the server does not offer; `offered` names a few that it does.
pub fn unknown_tool(name: &str, offered: &[&str], more: bool) -> ToolOutput {
    let mut out = ToolOutput::error(
        format!(
            "unknown tool {:?}. This server offers {}{}. To run a Gitea action, call gitea_find_action, then gitea_execute_action.",
            outbound::clip(name, 100),
            offered.join(", "),
            if more { ", …" } else { "" }
        ),
        serde_json::json!({"code": UNKNOWN_TOOL}),
    );
    out.facts.kind = OutcomeKind::Denied(UNKNOWN_TOOL.into());
    out
}

/// Scrubs `secrets` from an answer and fits it into `max` bytes (text and structured copy
/// together): the last step before any answer leaves, on every surface.
pub fn finish(out: &mut ToolOutput, secrets: &Secrets, max: usize) {
    if let std::borrow::Cow::Owned(clean) = secrets.scrub_str(&out.text) {
        out.text = clean;
    }
    secrets.scrub_value(&mut out.structured);
    outbound::fit(&mut out.text, &mut out.structured, max);
}
