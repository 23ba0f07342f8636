//! Loading and reading a Gitea / Forgejo swagger 2.0 document.
//!
//! This module owns the bytes of the API description: where they come from (a file the operator
//! pinned, or the instance's `/swagger.v1.json`), their sha256, the pin check, and a typed,
//! validated view of the operations ([`Spec`]). It knows nothing about actions, names or policy:
//! that is `catalog`'s job.
//!
//! Every structural problem is reported with the JSON pointer of the offending node, so an
//! operator can find it in a document of several megabytes.

mod load;
mod model;

pub use load::{
    DEFAULT_PINNED_SPEC, SpecSource, pin_path_for, pinned_spec_path, read_pin, read_spec_file,
    verify_pin,
};
pub use model::{
    CollectionFormat, Flavor, HttpMethod, Operation, ParamLocation, Parameter, ResponseKind, Spec,
    SpecDiff, clean_text, template_names,
};

/// Errors raised while loading or parsing an API description.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("cannot read the API description {path}: {source}")]
    Read {
        /// The file that was being read.
        path: String,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The instance did not hand out its document.
    #[error("cannot fetch {url}: {reason}")]
    Fetch {
        /// The URL that was requested (never carries credentials).
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The bytes are not JSON.
    #[error("the API description is not valid JSON (line {line}, column {column}): {message}")]
    Json {
        /// 1-based line of the syntax error.
        line: usize,
        /// 1-based column of the syntax error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The JSON is not a swagger document this server understands.
    #[error("malformed API description at {pointer}: {message}")]
    Malformed {
        /// JSON pointer (RFC 6901) of the node at fault.
        pointer: String,
        /// What was expected there.
        message: String,
    },
    /// The document's sha256 differs from the configured pin.
    #[error(
        "the API description does not match its pin: expected sha256 {expected}, got {actual}. \
         Descriptions reach the model, so a changed document is a changed prompt: review it and \
         re-pin with `aegis-gitea-mcp spec pin`, or update GITEA_SPEC_SHA256"
    )]
    PinMismatch {
        /// The pinned hash.
        expected: String,
        /// The hash of the document that was loaded.
        actual: String,
    },
    /// A pin value is not a sha256 hex digest.
    #[error("invalid sha256 pin {origin}: expected 64 hexadecimal characters, got {value:?}")]
    BadPin {
        /// Where the pin came from (variable or file).
        origin: String,
        /// The offending value (a hash is not a secret).
        value: String,
    },
}

/// Builds a [`Error::Malformed`].
pub(crate) fn malformed(pointer: &str, message: impl Into<String>) -> Error {
    Error::Malformed {
        pointer: pointer.to_string(),
        message: message.into(),
    }
}

/// Escapes one reference token of a JSON pointer (RFC 6901).
pub(crate) fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
