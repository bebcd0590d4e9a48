//! [`Pattern`]: a schema's `pattern` (or a `patternProperties` name, or a format's generated pattern) compiled
//! by the host's ECMAScript engine, kept with its source for violation messages.

use std::borrow::Cow;
use std::rc::Rc;

use super::host::{HostRegex, RegexEngine};

/// A pattern compiled by the host (`RegExp` with the flag `u` in the page), matched anywhere in a string.
#[derive(Clone)]
pub struct Pattern {
    /// The pattern as the schema writes it (or a format's generated pattern).
    pub source: Cow<'static, str>,
    /// The host's compiled regular expression.
    pub regex: Rc<dyn HostRegex>,
}

impl Pattern {
    /// Compiles `source` with `regexes`; the host's reason when it refuses it.
    pub fn compile(
        regexes: &dyn RegexEngine,
        source: Cow<'static, str>,
    ) -> Result<Pattern, String> {
        let regex = regexes.compile_regex(&source)?;
        Ok(Pattern { source, regex })
    }
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pattern").field(&self.source).finish()
    }
}
