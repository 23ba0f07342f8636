//! What a call produced, as facts: Gitea's answer shaped to fit, or why nothing was sent (or no
//! answer came). No wording lives here: `render` turns these into what the model reads, the
//! audit log and the metrics classify them, resources and the CLI match on them.

use serde_json::{Map, Value};

use super::args::ArgProblems;
use super::confirm::{ConfirmError, Unavailable};
use crate::catalog::{ActionName, HttpMethod, Scope};
use crate::policy::WithheldReason;

/// A call's result.
pub type CallResult = Result<Executed, Refusal>;

/// The method and path of a request (sent, or previewed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestLine {
    /// HTTP method.
    pub method: HttpMethod,
    /// Path relative to `/api/v1`, encoded.
    pub path: String,
}

/// Gitea answered with success.
#[derive(Debug, Clone, PartialEq)]
pub struct Executed {
    /// The action, when the request matched one.
    pub action: Option<ActionName>,
    /// What was sent.
    pub request: RequestLine,
    /// Gitea's status (2xx).
    pub status: u16,
    /// The answer, shaped to fit.
    pub body: Shaped,
    /// The non-public repositories read before this write (the flow guard's sources; empty
    /// for reads and unguarded writes).
    pub flow_from: Vec<String>,
    /// Authors whose text lockdown replaced with a notice.
    pub locked_out: Vec<String>,
    /// Who wrote the user text of the answer (empty for answers without any).
    pub provenance: Vec<super::provenance::Authored>,
}

impl Executed {
    /// A successful answer; the guards' facts (flow sources, lockdown, provenance) start empty.
    pub fn new(
        action: Option<ActionName>,
        request: RequestLine,
        status: u16,
        body: Shaped,
    ) -> Executed {
        Executed {
            action,
            request,
            status,
            body,
            flow_from: Vec::new(),
            locked_out: Vec::new(),
            provenance: Vec::new(),
        }
    }
}

/// A successful answer's body, within the answer's bounds.
#[derive(Debug, Clone, PartialEq)]
pub enum Shaped {
    /// No content.
    Empty,
    /// JSON data, possibly cut, with paging facts for lists.
    Json {
        /// The data (cut when `cut` says so).
        data: Value,
        /// `data` serialized (compact): computed once, for the size check and the text.
        serialized: String,
        /// Paging facts, when Gitea sent `X-Total-Count` or `Link`.
        paging: Option<Paging>,
        /// How the data was cut to fit, if it was.
        cut: Option<JsonCut>,
    },
    /// Text (diffs, patches, raw files).
    Text {
        /// The text, at most the data budget.
        text: String,
        /// Set when the text was cut (or Gitea's answer was longer than was read).
        cut: Option<TextCut>,
    },
    /// A binary file.
    Binary {
        /// Its content type.
        content_type: String,
        /// Its size in bytes.
        size: usize,
        /// The bytes, base64-encoded.
        base64: String,
    },
}

/// How JSON data was made to fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonCut {
    /// A list kept its first `shown` of `total` items.
    Items {
        /// Items kept.
        shown: usize,
        /// Items Gitea sent.
        total: usize,
    },
    /// Long strings were shortened to `cap` characters.
    Strings {
        /// The cap.
        cap: usize,
    },
    /// Nothing smaller would do: the serialized data was cut (it is now a string).
    Blind,
}

/// How text was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextCut {
    /// Bytes kept.
    pub shown_bytes: usize,
    /// The length Gitea declared, if it did.
    pub total_bytes: Option<u64>,
}

/// Paging facts of a list answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Paging {
    /// The page shown.
    pub page: u64,
    /// The page size.
    pub limit: Option<u64>,
    /// `X-Total-Count`, if sent.
    pub total_count: Option<u64>,
    /// Whether more items follow.
    pub has_next: bool,
    /// The exact arguments for the next page.
    pub next_arguments: Option<Map<String, Value>>,
}

/// Why a dry run was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DryRunReason {
    /// The caller asked for it.
    Requested,
    /// `SAFE_MODE` previews every writing call.
    SafeMode,
}

/// The request a call would send, secrets masked.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// Method and path.
    pub request: RequestLine,
    /// The full URL with its query.
    pub url: String,
    /// Query pairs.
    pub query: Vec<(String, String)>,
    /// `Sudo`, if any.
    pub sudo: Option<String>,
    /// The body, secrets masked (JSON, a text excerpt, or multipart parts).
    pub body: Value,
    /// Token scopes the route needs.
    pub scopes: Vec<Scope>,
    /// The non-public repositories read before this write, when the flow guard asks for the
    /// confirmation.
    pub flow_from: Vec<String>,
}

/// A confirmation token offered for a destructive call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The token.
    pub token: String,
    /// How long it stays valid.
    pub ttl_secs: u64,
}

/// What is wrong with a raw request (before any policy is asked).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RawProblem {
    /// The method is not one of GET, POST, PUT, PATCH, DELETE.
    #[error("`method` must be GET, POST, PUT, PATCH or DELETE")]
    Method {
        /// What was given (clipped).
        given: String,
    },
    /// The path was refused by `raw::check_path`.
    #[error("{0}")]
    Path(String),
    /// Credentials in the query.
    #[error("credentials cannot be passed in `query`; the server authenticates itself")]
    CredentialInQuery,
    /// A query value that is an object.
    #[error("query parameter `{name}` must be a scalar or an array")]
    QueryValue {
        /// The parameter (clipped).
        name: String,
    },
    /// `query` is not an object.
    #[error("`query` must be an object")]
    QueryShape,
}

/// Why a call did not produce a successful answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// No action of that name or operationId.
    UnknownAction {
        /// The name given (clipped).
        name: String,
        /// Near matches from the search.
        suggestions: Vec<ActionName>,
    },
    /// The policy withholds it.
    Withheld {
        /// The action, or `METHOD path` for a raw request to an unknown path.
        target: String,
        /// Why.
        reason: WithheldReason,
    },
    /// The arguments do not fit the action's schema.
    InvalidArguments {
        /// The action.
        action: ActionName,
        /// What is wrong, and the usage line.
        problems: ArgProblems,
    },
    /// Valid arguments that still make no request (an empty path argument, bad base64).
    Unbuildable {
        /// The action.
        action: ActionName,
        /// Why.
        reason: String,
    },
    /// Raw requests are turned off.
    RawDisabled,
    /// A raw request that cannot be made.
    BadRaw(RawProblem),
    /// A raw request to a path no operation matches, with unknown paths denied.
    UnknownPath {
        /// The request.
        request: RequestLine,
    },
    /// Only previewed.
    DryRun {
        /// The action (or `METHOD path`).
        target: String,
        /// Why it was not sent.
        reason: DryRunReason,
        /// What would be sent.
        preview: Box<Preview>,
    },
    /// A destructive call waits for its confirmation.
    NeedsConfirmation {
        /// The action (or `METHOD path`).
        target: String,
        /// The token to repeat the call with.
        offer: Offer,
        /// What would be sent.
        preview: Box<Preview>,
    },
    /// The confirmation given was not accepted; a fresh one is offered.
    ConfirmationRefused {
        /// The action (or `METHOD path`).
        target: String,
        /// Why it was refused.
        error: ConfirmError,
        /// A token for these exact arguments.
        offer: Offer,
        /// What would be sent.
        preview: Box<Preview>,
    },
    /// No confirmation can be issued (the RNG failed) or its use recorded (the shared store is
    /// down): the call is refused, nothing is sent, and a token is not consumed.
    ConfirmationUnavailable {
        /// The action (or `METHOD path`).
        target: String,
        /// The cause.
        error: Unavailable,
    },
    /// The request certainly did not apply (never sent, or a read that failed).
    Transport {
        /// The action, when there is one.
        action: Option<ActionName>,
        /// The request.
        request: RequestLine,
        /// What happened.
        error: String,
    },
    /// A sent write got no answer: it may or may not have been applied.
    Unanswered {
        /// The action, when there is one.
        action: Option<ActionName>,
        /// The request.
        request: RequestLine,
        /// The caller's deadline passed (else the connection failed: `error`).
        deadline: bool,
        /// The connection error, when that is what happened.
        error: Option<String>,
        /// The read action that shows whether it took effect.
        check_with: Option<ActionName>,
    },
    /// A read got no answer within the caller's deadline.
    TimedOut {
        /// The action, when there is one.
        action: Option<ActionName>,
        /// The request.
        request: RequestLine,
    },
    /// Gitea answered with an error status.
    Gitea {
        /// The action, when there is one.
        action: Option<ActionName>,
        /// The request.
        request: RequestLine,
        /// The status.
        status: u16,
        /// Gitea's message (clipped).
        message: String,
        /// Scopes the route needs (shown for a 403).
        scopes: Vec<Scope>,
    },
    /// A write was answered with a redirect, which is never followed.
    Redirected {
        /// The action, when there is one.
        action: Option<ActionName>,
        /// The request.
        request: RequestLine,
        /// The status.
        status: u16,
        /// `Location` (clipped).
        location: String,
    },
    /// A file over `MAX_FILE_SIZE_BYTES`.
    FileTooLarge {
        /// The action, when there is one.
        action: Option<ActionName>,
        /// The request.
        request: RequestLine,
        /// The status.
        status: u16,
        /// The declared size, if known.
        size: Option<u64>,
        /// The limit.
        limit: usize,
    },
    /// A JSON answer too large to read.
    AnswerTooLarge {
        /// The action, when there is one.
        action: Option<ActionName>,
        /// The request.
        request: RequestLine,
        /// The status.
        status: u16,
        /// Bytes read before giving up.
        read: usize,
    },
    /// A success status with a body that is not JSON: the call may have succeeded.
    MalformedJson {
        /// The action, when there is one.
        action: Option<ActionName>,
        /// The request.
        request: RequestLine,
        /// The status.
        status: u16,
        /// The parser's complaint.
        error: String,
    },
}

impl Refusal {
    /// The request that was sent (or would have been), when one was built.
    pub fn request(&self) -> Option<&RequestLine> {
        match self {
            Refusal::UnknownPath { request }
            | Refusal::Transport { request, .. }
            | Refusal::Unanswered { request, .. }
            | Refusal::TimedOut { request, .. }
            | Refusal::Gitea { request, .. }
            | Refusal::Redirected { request, .. }
            | Refusal::FileTooLarge { request, .. }
            | Refusal::AnswerTooLarge { request, .. }
            | Refusal::MalformedJson { request, .. } => Some(request),
            Refusal::DryRun { preview, .. }
            | Refusal::NeedsConfirmation { preview, .. }
            | Refusal::ConfirmationRefused { preview, .. } => Some(&preview.request),
            _ => None,
        }
    }

    /// Gitea's status, when it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Refusal::Gitea { status, .. }
            | Refusal::Redirected { status, .. }
            | Refusal::FileTooLarge { status, .. }
            | Refusal::AnswerTooLarge { status, .. }
            | Refusal::MalformedJson { status, .. } => Some(*status),
            _ => None,
        }
    }
}
