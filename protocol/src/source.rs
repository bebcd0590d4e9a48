//! [`Source`]: what a text block cites or was found for it (web search results, document citations), reduced to
//! what a person may see: a title, a safe link and a snippet (`docs/protocol.md` §1). Provider-private citation
//! data never becomes part of it.
//!
//! Every reader of a Source (stream events, model requests, stored conversations) goes through the one
//! `Deserialize` here, so a `javascript:` URL cannot enter the runtime or the relay's store by any path; the
//! relay's decoders build Sources with [`Source::from_provider`], which drops what would be refused.

use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::Value;

use crate::value::{unexpected, FromValue};

/// Longest `url` accepted, in characters.
pub const MAX_SOURCE_URL_CHARACTERS: usize = 2048;
/// Longest `citedText` accepted, in characters (the relay cuts longer snippets to this).
pub const MAX_CITED_TEXT_CHARACTERS: usize = 500;

crate::wire! {
    written, ts(feature = "ts");
    /// One source of a text block (`docs/protocol.md` §1): `{ url?, title?, citedText? }`, at least `url` or `title`,
    /// none empty; `url` is an absolute http(s) URL, `citedText` at most 500 characters. Provider-private citation data
    /// is never part of it.
    // Read by hand below (`written`): every value is checked (`Source::check`), and null counts as absent.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Source {
        pub url: Option<String> = "url" optional,
        pub title: Option<String> = "title" optional,
        pub cited_text: Option<String> = "citedText" optional,
    }
}

/// The keys of [`Source`], in declaration order.
const FIELDS: &[&str] = &["url", "title", "citedText"];

/// Read by hand from the JSON value rather than derived: the blocks and events that carry sources already hold them
/// as a `Value` (`tagged.rs`), and a derived visitor, instantiated for the deserializers the browser runtime reads
/// with, made the wasm bundle about 0.6 KB gzip larger for three optional strings.
impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Source::from_value(Value::deserialize(deserializer)?)
    }
}

/// One source: an object with the keys of [`FIELDS`] (an unknown key is refused, `null` counts as absent), then
/// [`Source::check`].
impl FromValue for Source {
    fn from_value<E: de::Error>(value: Value) -> Result<Self, E> {
        let Value::Object(map) = value else {
            return Err(E::invalid_type(unexpected(&value), &"struct Source"));
        };
        let mut fields: [Option<String>; 3] = [None, None, None];
        for (key, value) in map {
            let Some(i) = FIELDS.iter().position(|name| *name == key) else {
                return Err(E::unknown_field(&key, FIELDS));
            };
            fields[i] = Option::<String>::from_value(value)?;
        }
        let [url, title, cited_text] = fields;
        Source {
            url,
            title,
            cited_text,
        }
        .check()
        .map_err(E::custom)
    }
}

impl Source {
    /// The rules every reader applies: a safe link, no empty string, a URL or a title, a snippet within bounds.
    fn check(self) -> Result<Self, String> {
        if let Some(url) = &self.url {
            if !is_safe_link(url) {
                return Err(format!(
                    "source url must be an absolute http(s) URL of at most {MAX_SOURCE_URL_CHARACTERS} characters without whitespace or control characters"
                ));
            }
        }
        for (name, value) in [("title", &self.title), ("citedText", &self.cited_text)] {
            if value.as_deref().is_some_and(str::is_empty) {
                return Err(format!("source {name} must not be empty"));
            }
        }
        if self.url.is_none() && self.title.is_none() {
            return Err("a source needs a url or a title".into());
        }
        if self
            .cited_text
            .as_deref()
            .is_some_and(|text| text.chars().count() > MAX_CITED_TEXT_CHARACTERS)
        {
            return Err(format!(
                "source citedText is longer than {MAX_CITED_TEXT_CHARACTERS} characters"
            ));
        }
        Ok(self)
    }

    /// A Source from what a provider reported, or `None` when there is nothing to show or its URL is not a safe
    /// link (a web source whose link cannot be followed is dropped whole; a document source has no URL at all).
    /// Blank strings count as absent, whitespace around them is trimmed and a snippet longer than
    /// [`MAX_CITED_TEXT_CHARACTERS`] is cut (ending in `…`).
    pub fn from_provider(
        url: Option<&str>,
        title: Option<&str>,
        cited_text: Option<&str>,
    ) -> Option<Source> {
        let present = |value: Option<&str>| {
            value
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let url = present(url);
        if url.as_deref().is_some_and(|url| !is_safe_link(url)) {
            return None;
        }
        let title = present(title);
        if url.is_none() && title.is_none() {
            return None;
        }
        let cited_text = present(cited_text).map(|text| {
            if text.chars().count() <= MAX_CITED_TEXT_CHARACTERS {
                return text;
            }
            let mut cut: String = text.chars().take(MAX_CITED_TEXT_CHARACTERS - 1).collect();
            cut.push('…');
            cut
        });
        Some(Source {
            url,
            title,
            cited_text,
        })
    }

    /// Characters (Unicode scalar values) of the visible parts, counted against `maxModelOutputCharacters`.
    pub fn characters(&self) -> u64 {
        [&self.url, &self.title, &self.cited_text]
            .into_iter()
            .flatten()
            .map(|s| s.chars().count() as u64)
            .sum()
    }
}

/// Whether `url` may become a link: `http` or `https` (any case) followed by `://` and a host character, at most
/// [`MAX_SOURCE_URL_CHARACTERS`] characters, with no whitespace or control characters anywhere (browsers strip
/// those before reading the scheme, which is how `java\tscript:` slips past naive checks).
pub fn is_safe_link(url: &str) -> bool {
    if url.chars().count() > MAX_SOURCE_URL_CHARACTERS
        || url.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return false;
    }
    // The scheme ends at the first `:` (a byte search: a substring search would link a string-search algorithm
    // into the browser runtime for this one check).
    let Some(colon) = url.bytes().position(|b| b == b':') else {
        return false;
    };
    let (scheme, rest) = url.split_at(colon);
    (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
        && rest.starts_with("://")
        && rest[3..]
            .chars()
            .next()
            .is_some_and(|c| c != '/' && c != '?' && c != '#')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absolute_http_and_https_urls_are_safe_links() {
        for ok in [
            "https://example.org/a?b#c",
            "http://localhost:8080",
            "HTTPS://EXAMPLE.ORG",
        ] {
            assert!(is_safe_link(ok), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "JavaScript://example.org/%0aalert(1)",
            "java\tscript:alert(1)",
            "data:text/html,hi",
            "//example.org",
            "/relative",
            "https:///path",
            "https://exa mple.org",
            "https://example.org/\u{0}",
            "ftp://example.org",
            "",
        ] {
            assert!(!is_safe_link(bad), "{bad:?}");
        }
        assert!(!is_safe_link(&format!(
            "https://e.org/{}",
            "a".repeat(2048)
        )));
    }

    #[test]
    fn a_provider_source_whose_url_is_refused_is_dropped_and_blanks_count_as_absent() {
        assert_eq!(
            Source::from_provider(Some("javascript:alert(1)"), Some("Title"), None),
            None
        );
        assert_eq!(
            Source::from_provider(Some("  "), Some(" Title "), Some("")),
            Some(Source {
                url: None,
                title: Some("Title".into()),
                cited_text: None
            })
        );
        assert_eq!(Source::from_provider(None, Some("  "), Some("x")), None);
    }

    #[test]
    fn a_long_provider_snippet_is_cut_to_the_limit() {
        let long = "é".repeat(MAX_CITED_TEXT_CHARACTERS + 10);
        let source = Source::from_provider(Some("https://e.org"), None, Some(&long)).unwrap();
        let cited = source.cited_text.unwrap();
        assert_eq!(cited.chars().count(), MAX_CITED_TEXT_CHARACTERS);
        assert!(cited.ends_with('…'));
    }
}
