//! Helpers of the JWKS tests: signing keys of every supported algorithm (P-256, P-384 and Ed25519 pairs made
//! fresh with ring; RSA from the committed fixture), a local JWKS server over real HTTP that counts its fetches
//! and can be switched to failing (with an OpenID provider configuration beside it, for discovery), and relays
//! whose `jwt` identity points at it.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::http::{Request, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
use serde_json::{json, Value};

use crate::common::{base_config, body_text, Relay, TestDb, HOST, ORIGIN};
use patchbridge_relay::config::RelayConfig;
use patchbridge_relay::store::Store;
use patchbridge_relay::{router, AppState};

pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jwt")
        .join(name)
}

pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims that pass: `sub`, `exp` ten minutes ahead.
pub fn claims(sub: &str) -> Value {
    json!({ "sub": sub, "exp": now() + 600 })
}

/// A private key, its public JWK (as published) and the algorithm the JWK names or implies.
#[derive(Clone)]
pub struct TestKey {
    pub kid: String,
    pub alg: Algorithm,
    pub jwk: Value,
    encoding: EncodingKey,
}

impl TestKey {
    pub fn es256(kid: &str) -> TestKey {
        ec(kid, Algorithm::ES256)
    }

    pub fn es384(kid: &str) -> TestKey {
        ec(kid, Algorithm::ES384)
    }

    pub fn ed25519(kid: &str) -> TestKey {
        let rng = SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        TestKey {
            kid: kid.into(),
            alg: Algorithm::EdDSA,
            jwk: json!({ "kty": "OKP", "crv": "Ed25519", "kid": kid, "use": "sig",
                         "x": b64(pair.public_key().as_ref()) }),
            encoding: EncodingKey::from_ed_der(pkcs8.as_ref()),
        }
    }

    /// The fixture RSA key (`test-private.pem`), published under `kid` for `alg` (RS* or PS*).
    pub fn rsa(kid: &str, alg: Algorithm) -> TestKey {
        let set: Value =
            serde_json::from_str(&std::fs::read_to_string(fixture("test-jwks.json")).unwrap())
                .unwrap();
        let published = &set["keys"][0];
        let pem = std::fs::read(fixture("test-private.pem")).unwrap();
        TestKey {
            kid: kid.into(),
            alg,
            jwk: json!({ "kty": "RSA", "kid": kid, "alg": format!("{alg:?}"), "use": "sig",
                         "n": published["n"], "e": published["e"] }),
            encoding: EncodingKey::from_rsa_pem(&pem).unwrap(),
        }
    }

    /// A token with this key's `kid` and algorithm.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_as(self.alg, Some(&self.kid), claims)
    }

    /// A token signed with this key's private half, its header naming `alg` and `kid`.
    pub fn sign_as(&self, alg: Algorithm, kid: Option<&str>, claims: &Value) -> String {
        let mut header = Header::new(alg);
        header.kid = kid.map(str::to_owned);
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

fn ec(kid: &str, alg: Algorithm) -> TestKey {
    let (signing, crv) = match alg {
        Algorithm::ES256 => (&signature::ECDSA_P256_SHA256_FIXED_SIGNING, "P-256"),
        _ => (&signature::ECDSA_P384_SHA384_FIXED_SIGNING, "P-384"),
    };
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(signing, &rng).unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(signing, pkcs8.as_ref(), &rng).unwrap();
    // Uncompressed point: 0x04, then x and y of equal length.
    let point = &pair.public_key().as_ref()[1..];
    let (x, y) = point.split_at(point.len() / 2);
    TestKey {
        kid: kid.into(),
        alg,
        jwk: json!({ "kty": "EC", "crv": crv, "kid": kid, "x": b64(x), "y": b64(y) }),
        encoding: EncodingKey::from_ec_der(pkcs8.as_ref()),
    }
}

/// `{"keys": [...]}` of these keys.
pub fn jwks(keys: &[&TestKey]) -> Value {
    json!({ "keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>() })
}

struct Served {
    document: Mutex<Value>,
    /// What `/.well-known/openid-configuration` answers (`Null`: the default, naming this server).
    configuration: Mutex<Value>,
    discoveries: AtomicUsize,
    cache_control: Mutex<String>,
    failing: AtomicBool,
    fetches: AtomicUsize,
    failed: AtomicUsize,
}

/// A JWKS endpoint on 127.0.0.1 (real HTTP), answering `GET /jwks.json`, and an OpenID provider configuration
/// at `GET /.well-known/openid-configuration` naming [`JwksServer::issuer`] and that key set.
pub struct JwksServer {
    pub url: String,
    /// `http://127.0.0.1:PORT`, the issuer the configuration names.
    pub issuer: String,
    served: Arc<Served>,
}

impl JwksServer {
    pub async fn start(document: Value) -> JwksServer {
        let served = Arc::new(Served {
            document: Mutex::new(document),
            configuration: Mutex::new(Value::Null),
            discoveries: AtomicUsize::new(0),
            cache_control: Mutex::new("public, max-age=3600".into()),
            failing: AtomicBool::new(false),
            fetches: AtomicUsize::new(0),
            failed: AtomicUsize::new(0),
        });
        let app = axum::Router::new()
            .route("/jwks.json", axum::routing::get(answer))
            .route(
                "/.well-known/openid-configuration",
                axum::routing::get(configuration),
            )
            .with_state(served.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        JwksServer {
            url: format!("http://{addr}/jwks.json"),
            issuer: format!("http://{addr}"),
            served,
        }
    }

    /// Replaces the provider configuration document.
    pub fn publish_configuration(&self, document: Value) {
        *self.served.configuration.lock().unwrap() = document;
    }

    /// Requests of the provider configuration received.
    pub fn discoveries(&self) -> usize {
        self.served.discoveries.load(Ordering::SeqCst)
    }

    pub fn publish(&self, document: Value) {
        *self.served.document.lock().unwrap() = document;
    }

    pub fn set_cache_control(&self, value: &str) {
        *self.served.cache_control.lock().unwrap() = value.into();
    }

    /// While failing, every fetch answers 503.
    pub fn set_failing(&self, failing: bool) {
        self.served.failing.store(failing, Ordering::SeqCst);
    }

    /// Requests received, answered or not.
    pub fn fetches(&self) -> usize {
        self.served.fetches.load(Ordering::SeqCst)
    }

    pub fn failed_fetches(&self) -> usize {
        self.served.failed.load(Ordering::SeqCst)
    }

    /// A `jwt` identity reading this server's keys, with `extra` settings.
    pub fn identity(&self, extra: Value) -> Value {
        let mut identity = json!({ "mode": "jwt", "jwksUrl": self.url });
        crate::common::merge(&mut identity, extra);
        identity
    }
}

async fn answer(State(served): State<Arc<Served>>) -> Response {
    served.fetches.fetch_add(1, Ordering::SeqCst);
    if served.failing.load(Ordering::SeqCst) {
        served.failed.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::SERVICE_UNAVAILABLE, "down for maintenance").into_response();
    }
    let document = served.document.lock().unwrap().to_string();
    let cache_control = served.cache_control.lock().unwrap().clone();
    (
        [
            ("content-type", "application/jwk-set+json"),
            ("cache-control", cache_control.as_str()),
        ],
        document,
    )
        .into_response()
}

async fn configuration(
    State(served): State<Arc<Served>>,
    headers: axum::http::HeaderMap,
) -> Response {
    served.discoveries.fetch_add(1, Ordering::SeqCst);
    if served.failing.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "down for maintenance").into_response();
    }
    let mut document = served.configuration.lock().unwrap().clone();
    if document.is_null() {
        let host = headers
            .get("host")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        document = json!({
            "issuer": format!("http://{host}"),
            "jwks_uri": format!("http://{host}/jwks.json"),
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        });
    }
    ([("content-type", "application/json")], document.to_string()).into_response()
}

/// A relay with this identity, started as the binary starts it: the first key set must arrive.
pub async fn relay_with(db: &TestDb, identity: Value) -> Result<Relay, String> {
    let mut config = base_config(db, json!({}));
    config["identity"] = identity;
    let config = RelayConfig::from_json(&config.to_string()).map_err(|e| e.to_string())?;
    let validated = config.validate().map_err(|e| e.to_string())?;
    let store = Store::connect(&validated.database).await.unwrap();
    let state = AppState::new(validated, store).unwrap();
    state.identity_ready().await?;
    Ok(Relay {
        app: router(state.clone()),
        state,
    })
}

/// `GET /api/conversations` with the token: the status and the body's error code (`""` for a 2xx).
pub async fn try_token(r: &Relay, token: &str) -> (StatusCode, String) {
    let (status, body) = send(r, "GET", token).await;
    let code = body["error"]["code"].as_str().unwrap_or("").to_owned();
    (status, code)
}

/// A request to `/api/conversations` (GET lists, POST creates) with `Authorization: Bearer <token>`.
pub async fn send(r: &Relay, method: &str, token: &str) -> (StatusCode, Value) {
    let mut request = Request::builder()
        .method(method)
        .uri("/api/conversations")
        .header("host", HOST)
        .header("authorization", format!("Bearer {token}"));
    let body = if method == "GET" {
        Body::empty()
    } else {
        request = request
            .header("origin", ORIGIN)
            .header("content-type", "application/json");
        Body::from("{}")
    };
    let response = r.send(request.body(body).unwrap()).await;
    let status = response.status();
    let text = body_text(response).await;
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}
