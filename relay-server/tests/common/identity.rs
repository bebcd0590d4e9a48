//! Helpers of the identity and hardening suites (`auth.rs`, `hardening.rs`): requests as a browser on the
//! relay's host sends them, answers read as status and JSON, and relays with an HS256 JWT identity with tokens
//! signed for them.

use std::os::unix::fs::PermissionsExt;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

use super::{base_config, body_text, merge, relay, Relay, TestDb, HOST};

/// The HS256 secret of [`hs256_relay`] and [`hs256_token`].
pub const HS_SECRET: &str = "0123456789abcdef0123456789abcdef-test-secret";

/// Seconds since the Unix epoch, for token claims.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A GET as a browser on the relay's host sends it, with `headers` added.
pub fn get_as(path: &str, headers: &[(&str, &str)]) -> Request<Body> {
    let mut builder = Request::builder()
        .method("GET")
        .uri(path)
        .header("host", HOST);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Body::empty()).unwrap()
}

/// The answer's status and its body as JSON (`null` when the body is not JSON).
pub async fn status_and_json(r: &Relay, request: Request<Body>) -> (StatusCode, Value) {
    let response = r.send(request).await;
    let status = response.status();
    let text = body_text(response).await;
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A relay whose identity is `jwt` with [`HS_SECRET`] read from an owner-only file (ending in a newline, as an
/// editor saves it), and `identity`'s fields (issuer, audience) merged over that. The directory holds the file.
pub async fn hs256_relay(db: &TestDb, identity: Value) -> (Relay, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let secret_file = dir.path().join("jwt-secret");
    std::fs::write(&secret_file, format!("{HS_SECRET}\n")).unwrap();
    std::fs::set_permissions(&secret_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut config = json!({ "mode": "jwt", "hs256Secret": { "file": secret_file } });
    merge(&mut config, identity);
    let r = relay(base_config(db, json!({ "identity": config }))).await;
    (r, dir)
}

/// `claims` signed with HS256 and [`HS_SECRET`].
pub fn hs256_token(claims: &impl serde::Serialize) -> String {
    encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(HS_SECRET.as_bytes()),
    )
    .unwrap()
}
