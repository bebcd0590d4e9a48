//! The rules of attached files (`docs/protocol.md` §1, ADR-015): the closed lists of media types a `document`
//! and a base64 `image` block may carry, the file-name rule, and the size of base64 data. The runtime checks them
//! on `send` and on load (its own error codes); the relay checks them before encoding (`INVALID_REQUEST`), so
//! both sides refuse the same blocks.

use crate::message::DocumentSource;

crate::string_enum! {
    /// The media types of a `document` block (closed set). PDF travels as `base64`, the others as `text`.
    pub enum DocumentMediaType {
        /// A PDF, as base64.
        Pdf = "application/pdf",
        /// Plain text (also source code files, mapped by extension).
        Plain = "text/plain",
        /// Markdown.
        Markdown = "text/markdown",
        /// Comma-separated values.
        Csv = "text/csv",
        /// JSON.
        Json = "application/json",
    }
}

impl DocumentMediaType {
    /// True for the types that travel as a `text` source; false for PDF (`base64`).
    pub const fn is_text(self) -> bool {
        !matches!(self, DocumentMediaType::Pdf)
    }
}

crate::string_enum! {
    /// The media types of a base64 `image` block (closed set: what every provider format takes).
    pub enum ImageMediaType {
        /// PNG.
        Png = "image/png",
        /// JPEG.
        Jpeg = "image/jpeg",
        /// GIF.
        Gif = "image/gif",
        /// WebP.
        Webp = "image/webp",
    }
}

/// The longest file name, in characters.
pub const MAX_NAME_CHARACTERS: usize = 255;

/// What is wrong with a document block (the runtime and the relay word and code it themselves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentProblem {
    /// The name is empty, longer than [`MAX_NAME_CHARACTERS`], holds a path separator or a control character.
    Name,
    /// The media type is not in [`DocumentMediaType`], or travels in the wrong source (`text/csv` as base64, PDF
    /// as text).
    Type,
    /// The base64 data is not standard padded base64, or a PDF's bytes do not start with `%PDF-`.
    Encoding,
}

/// Checks a document block's name, media type and encoding; gives the media type when all hold.
pub fn check_document(
    name: &str,
    source: &DocumentSource,
) -> Result<DocumentMediaType, DocumentProblem> {
    if !name_is_valid(name) {
        return Err(DocumentProblem::Name);
    }
    let media_type = DocumentMediaType::parse(source.media_type()).ok_or(DocumentProblem::Type)?;
    match source {
        DocumentSource::Base64 { data, .. } if !media_type.is_text() => {
            base64_decoded_len(data).ok_or(DocumentProblem::Encoding)?;
            // "%PDF-" in base64 begins "JVBERi0"; a file labelled PDF that is not one is refused here.
            if !data.starts_with("JVBERi0") {
                return Err(DocumentProblem::Encoding);
            }
            Ok(media_type)
        }
        DocumentSource::Text { .. } if media_type.is_text() => Ok(media_type),
        _ => Err(DocumentProblem::Type),
    }
}

/// A file name as the person picked it: 1 to 255 characters, no `/` or `\`, no control characters.
pub fn name_is_valid(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARACTERS
        && !name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control())
}

/// The number of bytes standard, padded base64 (`A-Z a-z 0-9 + /`, `=` only at the end) decodes to; `None` when
/// `data` is not such base64 (a `data:` prefix, whitespace, the URL-safe alphabet, a wrong length).
pub fn base64_decoded_len(data: &str) -> Option<usize> {
    let bytes = data.as_bytes();
    if bytes.len() % 4 != 0 {
        return None;
    }
    let padding = bytes.iter().rev().take_while(|&&b| b == b'=').count();
    if padding > 2 {
        return None;
    }
    let body = &bytes[..bytes.len() - padding];
    if !body
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
    {
        return None;
    }
    Some(bytes.len() / 4 * 3 - padding)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pdf(data: &str) -> DocumentSource {
        DocumentSource::Base64 {
            media_type: "application/pdf".into(),
            data: data.into(),
        }
    }

    fn text(media_type: &str) -> DocumentSource {
        DocumentSource::Text {
            media_type: media_type.into(),
            text: "a,b\n1,2\n".into(),
        }
    }

    #[test]
    fn base64_lengths_count_the_decoded_bytes_and_refuse_what_is_not_padded_standard_base64() {
        assert_eq!(base64_decoded_len(""), Some(0));
        assert_eq!(base64_decoded_len("JVBERi0x"), Some(6));
        assert_eq!(base64_decoded_len("JVBERg=="), Some(4));
        assert_eq!(base64_decoded_len("JVBERi0="), Some(5));
        for bad in [
            "JVBER",
            "JVB=ERi0",
            "JV-_Ri0x",
            "JVBE Ri0",
            "data:application/pdf;base64,JVBERi0x",
            "J===",
        ] {
            assert_eq!(base64_decoded_len(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_pdf_travels_as_base64_of_a_pdf_and_text_types_as_text() {
        assert_eq!(
            check_document("a.pdf", &pdf("JVBERi0xLjQK")),
            Ok(DocumentMediaType::Pdf)
        );
        assert_eq!(
            check_document("a.csv", &text("text/csv")),
            Ok(DocumentMediaType::Csv)
        );
        assert_eq!(
            check_document("a.pdf", &pdf("iVBORw0KGgo=")),
            Err(DocumentProblem::Encoding)
        );
        assert_eq!(
            check_document("a.pdf", &pdf("JVBERi0x!")),
            Err(DocumentProblem::Encoding)
        );
        assert_eq!(
            check_document("a.pdf", &text("application/pdf")),
            Err(DocumentProblem::Type)
        );
        assert_eq!(
            check_document(
                "a.csv",
                &DocumentSource::Base64 {
                    media_type: "text/csv".into(),
                    data: "YQ==".into()
                }
            ),
            Err(DocumentProblem::Type)
        );
        assert_eq!(
            check_document("a.ts", &text("video/mp2t")),
            Err(DocumentProblem::Type)
        );
        assert_eq!(
            check_document("a.txt", &text("Text/Plain")),
            Err(DocumentProblem::Type)
        );
    }

    #[test]
    fn a_name_is_one_to_255_characters_without_a_path_or_control_characters() {
        assert!(name_is_valid("Quartalsbericht 2026 – final.pdf"));
        assert!(name_is_valid(&"é".repeat(255)));
        for bad in [
            "",
            "reports/q3.pdf",
            "C:\\q3.pdf",
            "a\nb.txt",
            &"x".repeat(256),
        ] {
            assert!(!name_is_valid(bad), "{bad:?}");
        }
    }
}
