//! An origin as the configuration names one (`server.allowedOrigins`, the sandbox's `publicOrigin` and
//! `pageOrigins`): `scheme://host[:port]`, normalised as browsers send it in `Origin`. A leaf, so every section
//! that names origins reads them the same way.

/// Normalises `text` to `scheme://host[:port]` (no path, no trailing slash, no credentials), or says why not.
pub fn origin(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|e| format!("not an origin: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err("must be an http(s) origin".into());
    }
    if url.path() != "/"
        || url.query().is_some()
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err("must be scheme://host[:port] with no path".into());
    }
    Ok(url.origin().ascii_serialization())
}
