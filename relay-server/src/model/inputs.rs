//! The input kinds a model request carries, checked against what its model takes (`capabilities.inputs`,
//! `docs/protocol.md` §5): a PDF document or an image for a model that does not take it is refused with
//! `UNSUPPORTED_INPUT` before anything goes upstream (and before the spending limits count the call).

use patchbridge_protocol::{Block, DocumentSource, InputKind, ModelRequest, RelayErrorCode};

use crate::config::ValidatedModel;
use crate::error::RelayError;

/// The kind one block needs beyond text, with how the error names it.
fn needs(block: &Block) -> Option<(InputKind, String)> {
    match block {
        Block::Image { .. } => Some((InputKind::Image, "an image".to_owned())),
        Block::Document {
            name,
            source: DocumentSource::Base64 { .. },
        } => Some((InputKind::Pdf, format!("the PDF document {name:?}"))),
        _ => None,
    }
}

/// Refuses the request when one of its blocks needs an input kind `model` does not take.
pub fn check(request: &ModelRequest, model: &ValidatedModel) -> Result<(), RelayError> {
    for message in &request.messages {
        for (kind, what) in message.blocks.iter().filter_map(needs) {
            if !model.inputs.contains(&kind) {
                let takes: Vec<&str> = model.inputs.iter().map(|k| k.as_str()).collect();
                return Err(RelayError::new(
                    RelayErrorCode::UnsupportedInput,
                    format!(
                        "message {} carries {what}; model `{}` takes {} (capabilities.inputs)",
                        message.id,
                        model.config.id,
                        takes.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}
