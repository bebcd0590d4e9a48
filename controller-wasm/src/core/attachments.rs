//! Files a person attaches (pure): the checks of a user message's `image` and `document` blocks and the sizes
//! that fit together (`docs/protocol.md` §1 "Sizes", ADR-015).
//!
//! On `send` / `editLastMessage` ([`check_new_message`]) every attachment is checked before anything is sent,
//! each failure with its own stable code and naming the file: the media type from the closed lists of
//! `patchbridge_protocol::document` (`AGENT_ATTACHMENT_TYPE`), the name and the encoding
//! (`AGENT_ATTACHMENT_INVALID`), the file's size (`AGENT_ATTACHMENT_TOO_LARGE`), the files of the message
//! together (`AGENT_MESSAGE_TOO_LARGE`); then the conversation with the new message
//! ([`check_conversation_size`], `AGENT_CONVERSATION_TOO_LARGE`), since the whole history goes to the model on
//! every call and is saved whole.
//!
//! On load and for `start` input ([`structure_problem`], through `messages`) a document's name, type and
//! encoding are checked, not its size: what was saved under other limits is never locked out. Images are
//! checked on `send` only: conversations saved before these checks hold images of any type, and refusing them
//! on load would lose them.

use patchbridge_protocol::document::{
    base64_decoded_len, check_document, DocumentMediaType, DocumentProblem, ImageMediaType,
};
use patchbridge_protocol::write::Object;
use patchbridge_protocol::{Block, DocumentSource, ImageSource};
use serde_json::Value;

use super::error::{AgentError, ErrorCode};
use super::limits::{safe_positive_integer, MAX_SAFE_INTEGER};

/// The sizes of attached files and of the conversation that carries them. The defaults agree with the relay's
/// (`relay-server/README.md`): a message at its limits, base64 and all, fits a conversation many times over,
/// and a conversation at its limit, with tools, fits the relay's request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachmentLimits {
    /// `maxFileBytes`: one file's size (a base64 image or PDF counts its decoded bytes, a text file its UTF-8
    /// bytes). Default 3 MiB (3145728), 4 MiB as base64.
    pub max_file_bytes: u64,
    /// `maxMessageBytes`: the files of one message together, counted like `maxFileBytes`. Default 4 MiB
    /// (4194304).
    pub max_message_bytes: u64,
    /// `maxConversationBytes`: the JSON text of the whole conversation (`{ messages, modelState }`, as saved and
    /// as sent to the model). Default 16 MiB (16777216), the relay's `limits.maxConversationBytes`.
    pub max_conversation_bytes: u64,
}

impl AttachmentLimits {
    /// The defaults (the relay's defaults agree: `maxConversationBytes` 16 MiB, `maxRequestBytes` 20 MiB).
    pub const DEFAULT: AttachmentLimits = AttachmentLimits {
        max_file_bytes: 3 * 1024 * 1024,
        max_message_bytes: 4 * 1024 * 1024,
        max_conversation_bytes: 16 * 1024 * 1024,
    };
}

impl AttachmentLimits {
    /// The `attachments` option of `createAgentController` (`{ maxFileBytes?, maxMessageBytes?,
    /// maxConversationBytes? }`): given keys replace [`AttachmentLimits::DEFAULT`], each a safe positive integer;
    /// `null` / absent keeps the defaults; another key is refused (`AGENT_INVALID_OPTIONS`, `details.key`).
    pub fn from_partial_json(value: &Value) -> Result<AttachmentLimits, AgentError> {
        let mut limits = AttachmentLimits::DEFAULT;
        if value.is_null() {
            return Ok(limits);
        }
        let Some(object) = value.as_object() else {
            return Err(AgentError::new(
                ErrorCode::InvalidOptions,
                "options.attachments must be an object { maxFileBytes?, maxMessageBytes?, maxConversationBytes? }",
            ));
        };
        for (key, raw) in object {
            let slot = match key.as_str() {
                "maxFileBytes" => &mut limits.max_file_bytes,
                "maxMessageBytes" => &mut limits.max_message_bytes,
                "maxConversationBytes" => &mut limits.max_conversation_bytes,
                _ => {
                    return Err(AgentError::new(
                        ErrorCode::InvalidOptions,
                        format!("options.attachments: unknown key {key:?} (known: maxFileBytes, maxMessageBytes, maxConversationBytes)"),
                    )
                    .with_details(Object::new().put("key", key.as_str()).done()))
                }
            };
            *slot = safe_positive_integer(raw)
                .filter(|&n| (1..=MAX_SAFE_INTEGER).contains(&n))
                .ok_or_else(|| {
                    AgentError::new(
                        ErrorCode::InvalidOptions,
                        format!(
                            "options.attachments.{key} must be a safe positive integer (bytes)"
                        ),
                    )
                    .with_details(Object::new().put("key", key.as_str()).done())
                })?;
        }
        Ok(limits)
    }
}

impl Default for AttachmentLimits {
    fn default() -> Self {
        AttachmentLimits::DEFAULT
    }
}

/// What a message's attachment is called in errors: the document's name, or "image N" (images have none).
fn label(block: &Block, position: usize) -> String {
    match block {
        Block::Document { name, .. } => format!("{name:?}"),
        _ => format!("image {position}"),
    }
}

/// The size an attachment counts for (`None` for blocks that are not files; an image by URL counts 0: the
/// provider fetches it).
fn file_bytes(block: &Block) -> Option<u64> {
    match block {
        Block::Image {
            source: ImageSource::Base64 { data, .. },
        }
        | Block::Document {
            source: DocumentSource::Base64 { data, .. },
            ..
        } => Some(base64_decoded_len(data).unwrap_or(data.len()) as u64),
        Block::Document {
            source: DocumentSource::Text { text, .. },
            ..
        } => Some(text.len() as u64),
        Block::Image { .. } => Some(0),
        _ => None,
    }
}

fn details(block: &Block, position: usize) -> Object {
    let mut object = Object::new();
    match block {
        Block::Document { name, source } => {
            object
                .put("name", name.as_str())
                .put("mediaType", source.media_type());
        }
        Block::Image {
            source: ImageSource::Base64 { media_type, .. },
        } => {
            object
                .put("image", position as u64)
                .put("mediaType", media_type.as_str());
        }
        _ => {
            object.put("image", position as u64);
        }
    }
    object
}

/// The type and encoding problem of one attachment on `send`, if any.
fn content_problem(block: &Block, position: usize) -> Option<AgentError> {
    let what = label(block, position);
    let (code, text) = match block {
        Block::Document { name, source } => match check_document(name, source) {
            Ok(_) => return None,
            Err(DocumentProblem::Name) => (
                ErrorCode::AttachmentInvalid,
                format!("document {what}: a file name is 1 to 255 characters, without a path or control characters"),
            ),
            Err(DocumentProblem::Type) => (
                ErrorCode::AttachmentType,
                type_text(&what, source.media_type(), DocumentMediaType::parse(source.media_type())),
            ),
            Err(DocumentProblem::Encoding) => (
                ErrorCode::AttachmentInvalid,
                format!("document {what}: its data is not standard base64 of a PDF (no data: prefix)"),
            ),
        },
        Block::Image {
            source: ImageSource::Base64 { media_type, data },
        } => {
            if ImageMediaType::parse(media_type).is_none() {
                (
                    ErrorCode::AttachmentType,
                    format!(
                        "{what}: media type {media_type:?} is not one of {}",
                        ImageMediaType::ALL.map(ImageMediaType::as_str).join(", ")
                    ),
                )
            } else if base64_decoded_len(data).is_none() {
                (
                    ErrorCode::AttachmentInvalid,
                    format!("{what}: its data is not standard base64 (no data: prefix)"),
                )
            } else {
                return None;
            }
        }
        _ => return None,
    };
    Some(AgentError::new(code, text).with_details(details(block, position).done()))
}

fn type_text(what: &str, media_type: &str, known: Option<DocumentMediaType>) -> String {
    match known {
        Some(DocumentMediaType::Pdf) => {
            format!("document {what}: application/pdf travels as a base64 source")
        }
        Some(_) => format!("document {what}: {media_type} travels as a text source"),
        None => format!(
            "document {what}: media type {media_type:?} is not one of {} (source code is sent as text/plain)",
            DocumentMediaType::ALL
                .map(DocumentMediaType::as_str)
                .join(", ")
        ),
    }
}

/// Checks the attachments of a message about to be sent: each file's type, name and encoding, each file's size,
/// then the files together. The first failure is returned; its `details` name the file (`name` or `image`, the
/// 1-based position among the message's images), and for sizes `bytes` and `limit`.
pub fn check_new_message(blocks: &[Block], limits: &AttachmentLimits) -> Result<(), AgentError> {
    let mut total = 0u64;
    let mut images = 0usize;
    for block in blocks {
        let Some(bytes) = file_bytes(block) else {
            continue;
        };
        if matches!(block, Block::Image { .. }) {
            images += 1;
        }
        if let Some(error) = content_problem(block, images) {
            return Err(error);
        }
        if bytes > limits.max_file_bytes {
            return Err(AgentError::new(
                ErrorCode::AttachmentTooLarge,
                format!(
                    "{} is {} bytes; a file may have at most {} bytes (maxFileBytes)",
                    described(block, images),
                    bytes,
                    limits.max_file_bytes
                ),
            )
            .with_details(
                details(block, images)
                    .put("bytes", bytes)
                    .put("limit", limits.max_file_bytes)
                    .done(),
            ));
        }
        total = total.saturating_add(bytes);
    }
    if total > limits.max_message_bytes {
        return Err(AgentError::new(
            ErrorCode::MessageTooLarge,
            format!(
                "the message's files are {total} bytes together; a message may carry at most {} bytes of files (maxMessageBytes)",
                limits.max_message_bytes
            ),
        )
        .with_details(
            Object::new()
                .put("bytes", total)
                .put("limit", limits.max_message_bytes)
                .done(),
        ));
    }
    Ok(())
}

fn described(block: &Block, position: usize) -> String {
    match block {
        Block::Document { .. } => format!("document {}", label(block, position)),
        _ => label(block, position),
    }
}

/// Checks that a conversation whose JSON text is `bytes` long fits `maxConversationBytes`: past it, the turn is
/// refused before anything is sent (`AGENT_CONVERSATION_TOO_LARGE`), and the person's message is not added.
pub fn check_conversation_size(bytes: u64, limits: &AttachmentLimits) -> Result<(), AgentError> {
    if bytes <= limits.max_conversation_bytes {
        return Ok(());
    }
    Err(AgentError::new(
        ErrorCode::ConversationTooLarge,
        format!(
            "with this message the conversation would be {bytes} bytes; a conversation holds at most {} bytes (maxConversationBytes). Start a new conversation, or send it without its files",
            limits.max_conversation_bytes
        ),
    )
    .with_details(
        Object::new()
            .put("bytes", bytes)
            .put("limit", limits.max_conversation_bytes)
            .done(),
    ))
}

/// The structural problem of a stored or `start`-input block, if any (documents only; see the module docs):
/// a text the message rules put in `AGENT_CONVERSATION_CORRUPT` / `AGENT_INVALID_INPUT` errors.
pub fn structure_problem(block: &Block) -> Option<String> {
    let Block::Document { name, source } = block else {
        return None;
    };
    check_document(name, source).err().map(|problem| {
        let what = match problem {
            DocumentProblem::Name => "its name is empty, too long, or holds a path",
            DocumentProblem::Type => {
                "its media type is not one of the closed list in its source kind"
            }
            DocumentProblem::Encoding => "its data is not standard base64 of a PDF",
        };
        format!("document {name:?}: {what}")
    })
}
