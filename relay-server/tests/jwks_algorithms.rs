//! Which tokens a JWKS verifies: ES256, ES384, EdDSA, RS256 and PS256 tokens are accepted; each key only with
//! its own algorithm (a header naming another algorithm, an HMAC token keyed with public key material, a
//! symmetric key in the set, and `alg: none` are all refused); the user id from the configured claim; the
//! same algorithms from a JWKS file.

mod common;
mod jwks_support;

use axum::http::StatusCode;
use common::*;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use jwks_support::*;
use serde_json::{json, Value};

const UNAUTHORIZED: (StatusCode, &str) = (StatusCode::UNAUTHORIZED, "UNAUTHENTICATED");

fn all_keys() -> Vec<TestKey> {
    vec![
        TestKey::es256("ec-256"),
        TestKey::es384("ec-384"),
        TestKey::ed25519("ed"),
        TestKey::rsa("rsa", Algorithm::RS256),
        TestKey::rsa("rsa-pss", Algorithm::PS256),
    ]
}

async fn answer(r: &Relay, token: &str) -> (StatusCode, String) {
    try_token(r, token).await
}

#[tokio::test]
async fn es256_es384_eddsa_rs256_and_ps256_tokens_are_accepted_with_issuer_and_audience() {
    let keys = all_keys();
    let server = JwksServer::start(jwks(&keys.iter().collect::<Vec<_>>())).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(
        &db,
        server.identity(json!({ "issuer": "https://idp.test/", "audience": "relay" })),
    )
    .await
    .unwrap();
    let good =
        json!({ "sub": "alice", "exp": now() + 600, "iss": "https://idp.test/", "aud": "relay" });
    for key in &keys {
        assert_eq!(
            answer(&r, &key.sign(&good)).await.0,
            StatusCode::OK,
            "{:?} ({})",
            key.alg,
            key.kid
        );
        let mut wrong_audience = good.clone();
        wrong_audience["aud"] = json!("someone-else");
        let mut expired = good.clone();
        expired["exp"] = json!(now() - 3600);
        for bad in [wrong_audience, expired] {
            assert_eq!(
                answer(&r, &key.sign(&bad)).await,
                to_owned(UNAUTHORIZED),
                "{bad}"
            );
        }
    }
    // A token signed by another key under a published kid is refused.
    let impostor = TestKey::es256("ec-256");
    assert_eq!(
        answer(&r, &impostor.sign(&good)).await,
        to_owned(UNAUTHORIZED)
    );
    assert_eq!(server.fetches(), 1, "every kid was known");
}

fn to_owned((status, code): (StatusCode, &str)) -> (StatusCode, String) {
    (status, code.to_owned())
}

/// `header.payload.` with no signature, as `alg: none` tokens are.
fn unsigned(header: Value, claims: &Value) -> String {
    format!(
        "{}.{}.",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    )
}

#[tokio::test]
async fn a_key_verifies_only_its_own_algorithm_and_none_is_never_accepted() {
    let keys = all_keys();
    let [ec256, ec384, ed, rsa, rsa_pss] = [&keys[0], &keys[1], &keys[2], &keys[3], &keys[4]];
    let secret = b"0123456789abcdef0123456789abcdef-symmetric";
    let mut document = jwks(&keys.iter().collect::<Vec<_>>());
    document["keys"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "kty": "oct", "kid": "sym", "alg": "HS256", "k": b64(secret) }));
    let server = JwksServer::start(document).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(&db, server.identity(json!({}))).await.unwrap();
    let claims = claims("mallory");
    let public_pem = std::fs::read(fixture("test-public.pem")).unwrap();
    let hmac = |kid: &str, key: &[u8]| {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(kid.into());
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(key)).unwrap()
    };
    let refused = [
        // Validly signed by the RSA key, but the header names an algorithm its JWK does not.
        (
            "RS384 under an RS256 key",
            rsa.sign_as(Algorithm::RS384, Some("rsa"), &claims),
        ),
        (
            "PS256 under an RS256 key",
            rsa.sign_as(Algorithm::PS256, Some("rsa"), &claims),
        ),
        (
            "RS256 under a PS256 key",
            rsa.sign_as(Algorithm::RS256, Some("rsa-pss"), &claims),
        ),
        (
            "ES384 under a P-256 key",
            ec384.sign_as(Algorithm::ES384, Some("ec-256"), &claims),
        ),
        (
            "EdDSA under an ES256 key",
            ed.sign_as(Algorithm::EdDSA, Some("ec-256"), &claims),
        ),
        (
            "ES256 under an EdDSA key",
            ec256.sign_as(Algorithm::ES256, Some("ed"), &claims),
        ),
        // HMAC keyed with public material (the classic RS256 → HS256 confusion), and a symmetric JWK.
        ("HS256 keyed with the public PEM", hmac("rsa", &public_pem)),
        (
            "HS256 keyed with the RSA modulus",
            hmac("rsa", rsa.jwk["n"].as_str().unwrap().as_bytes()),
        ),
        ("HS256 with the set's oct key", hmac("sym", secret)),
        (
            "alg none",
            unsigned(json!({ "alg": "none", "kid": "rsa" }), &claims),
        ),
        (
            "alg None",
            unsigned(json!({ "alg": "None", "typ": "JWT" }), &claims),
        ),
        (
            "alg none with a signature",
            format!("{}sig", unsigned(json!({ "alg": "none" }), &claims)),
        ),
    ];
    for (what, token) in refused {
        assert_eq!(answer(&r, &token).await, to_owned(UNAUTHORIZED), "{what}");
    }
    // The same keys with their own algorithms pass, and a token without kid finds its key by algorithm.
    for key in [ec256, ec384, ed, rsa, rsa_pss] {
        assert_eq!(
            answer(&r, &key.sign(&claims)).await.0,
            StatusCode::OK,
            "{}",
            key.kid
        );
    }
    assert_eq!(
        answer(&r, &ed.sign_as(Algorithm::EdDSA, None, &claims))
            .await
            .0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn the_user_id_is_the_configured_claim() {
    let key = TestKey::es256("k");
    let server = JwksServer::start(jwks(&[&key])).await;
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(&db, server.identity(json!({ "userIdClaim": "uid" })))
        .await
        .unwrap();
    let token = |sub: &str, uid: Value| {
        let mut claims = claims(sub);
        if !uid.is_null() {
            claims["uid"] = uid;
        }
        key.sign(&claims)
    };
    let (status, _) = send(&r, "POST", &token("shared-sub", json!("alice"))).await;
    assert_eq!(status, StatusCode::CREATED);
    let count = |page: Value| page["items"].as_array().map(Vec::len);
    // Same `sub`, other `uid`: another user, who sees nothing.
    let (status, page) = send(&r, "GET", &token("shared-sub", json!("bob"))).await;
    assert_eq!((status, count(page)), (StatusCode::OK, Some(0)));
    // Other `sub`, same `uid`: the same user.
    let (status, page) = send(&r, "GET", &token("another-sub", json!("alice"))).await;
    assert_eq!((status, count(page)), (StatusCode::OK, Some(1)));
    // The claim missing, not a string, or not an acceptable id: refused.
    for uid in [Value::Null, json!(42), json!(" alice"), json!("")] {
        assert_eq!(
            answer(&r, &token("shared-sub", uid.clone())).await,
            to_owned(UNAUTHORIZED),
            "{uid}"
        );
    }
    // With a claim other than `sub`, `sub` itself is not required.
    let no_sub = key.sign(&json!({ "uid": "alice", "exp": now() + 600 }));
    assert_eq!(answer(&r, &no_sub).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_jwks_file_holds_the_same_algorithms() {
    let keys = all_keys();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, jwks(&keys.iter().collect::<Vec<_>>()).to_string()).unwrap();
    let db = TestDb::new(Backend::Sqlite);
    let r = relay_with(&db, json!({ "mode": "jwt", "jwksFile": file }))
        .await
        .unwrap();
    let claims = claims("carol");
    for key in &keys {
        assert_eq!(
            answer(&r, &key.sign(&claims)).await.0,
            StatusCode::OK,
            "{}",
            key.kid
        );
    }
    let rsa = &keys[3];
    assert_eq!(
        answer(&r, &rsa.sign_as(Algorithm::RS512, Some("rsa"), &claims)).await,
        to_owned(UNAUTHORIZED)
    );
    // A token naming a kid the file does not have is refused (a file is never refetched).
    assert_eq!(
        answer(
            &r,
            &rsa.sign_as(Algorithm::RS256, Some("elsewhere"), &claims)
        )
        .await,
        to_owned(UNAUTHORIZED)
    );
    // A file without any usable key is a configuration error.
    std::fs::write(
        &file,
        json!({ "keys": [{ "kty": "oct", "k": "c2VjcmV0" }] }).to_string(),
    )
    .unwrap();
    let error = relay_with(&db, json!({ "mode": "jwt", "jwksFile": file }))
        .await
        .err()
        .unwrap();
    assert!(
        error.contains("identity.jwksFile") && error.contains("no usable signing key"),
        "{error}"
    );
}
