//! [`ConfigError`]: a configuration problem, as the path of the bad field and what is wrong with it. A leaf,
//! so every section's validation (the spending section's included, `crate::spending::config`) can return it
//! without importing the configuration that holds the section.

/// A configuration error: the path of the bad field and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config error at `{path}`: {message}")]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

/// A [`ConfigError`] at `path`.
pub(crate) fn err(path: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        path: path.into(),
        message: message.into(),
    }
}
