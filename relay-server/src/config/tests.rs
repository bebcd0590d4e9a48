//! Strict configuration: every rejection names the path of the bad field.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::*;

fn parse(value: serde_json::Value) -> Result<RelayConfig, ConfigError> {
    RelayConfig::from_json(&value.to_string())
}

fn validate(value: serde_json::Value) -> Result<Validated, ConfigError> {
    parse(value)?.validate()
}

fn secret_file(mode: u32) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("key");
    std::fs::write(&path, "sk-from-file\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    (dir, path)
}

fn openai_model(key_file: &Path) -> serde_json::Value {
    json!({ "id": "gpt", "provider": "openai-chat", "baseUrl": "https://api.openai.com/v1",
            "upstreamModel": "gpt-4.1-mini", "apiKey": { "file": key_file } })
}

#[test]
fn unknown_key_is_rejected_with_its_path() {
    let e = parse(json!({ "server": { "bnd": "127.0.0.1:1" } })).unwrap_err();
    assert_eq!(e.path, "server.bnd");
    let e = parse(json!({ "models": [ { "id": "a", "provider": "openai-chat", "baseUrl": "https://x", "upstreamModel": "m", "apiKey": { "env": "K" }, "temprature": 1 } ] })).unwrap_err();
    assert_eq!(e.path, "models[0].temprature");
}

#[test]
fn duplicate_key_is_rejected_with_its_path() {
    let text = r#"{ "models": [ { "id": "a", "provider": "openai-chat", "baseUrl": "https://a", "baseUrl": "http://evil", "upstreamModel": "m", "apiKey": {"env": "K"} } ] }"#;
    let e = RelayConfig::from_json(text).unwrap_err();
    assert!(e.path.starts_with("models[0]"), "{e}");
    assert!(e.message.contains("duplicate key `baseUrl`"), "{e}");
    let e = RelayConfig::from_json(r#"{"demo": true, "demo": false}"#).unwrap_err();
    assert!(e.message.contains("duplicate key `demo`"), "{e}");
}

#[test]
fn owner_only_secret_file_is_required() {
    let (_d, good) = secret_file(0o600);
    let v = validate(json!({ "models": [ openai_model(&good) ] })).unwrap();
    assert_eq!(
        v.models[0].api_key.as_ref().unwrap().expose(),
        "sk-from-file"
    );
    let (_d2, bad) = secret_file(0o644);
    let e = validate(json!({ "models": [ openai_model(&bad) ] })).unwrap_err();
    assert_eq!(e.path, "models[0].apiKey");
    assert!(e.message.contains("owner only"), "{e}");
}

#[test]
fn secret_env_var_must_be_set() {
    let e = validate(json!({ "models": [ { "id": "a", "provider": "anthropic-messages", "baseUrl": "https://api.anthropic.com/v1",
        "upstreamModel": "claude", "apiKey": { "env": "PB_TEST_SURELY_UNSET_VARIABLE" } } ] }))
    .unwrap_err();
    assert_eq!(e.path, "models[0].apiKey");
    assert!(e.message.contains("PB_TEST_SURELY_UNSET_VARIABLE"));
    let e = parse(json!({ "models": [ { "id": "a", "provider": "openai-chat", "baseUrl": "https://x", "upstreamModel": "m", "apiKey": "sk-inline" } ] })).unwrap_err();
    assert_eq!(
        e.path, "models[0].apiKey",
        "inline secrets are not accepted: {e}"
    );
}

#[test]
fn invalid_provider_config_never_falls_back_to_demo() {
    let (_d, key) = secret_file(0o600);
    let mut bad = openai_model(&key);
    bad["baseUrl"] = json!("http://api.example.com/v1");
    let e = validate(json!({ "demo": true, "models": [ bad ] })).unwrap_err();
    assert_eq!(e.path, "models[0].baseUrl");
    let e = validate(json!({ "demo": true, "models": [ { "id": "x", "provider": "openai", "baseUrl": "https://x", "upstreamModel": "m" } ] })).unwrap_err();
    assert_eq!(e.path, "models[0].provider");
    // Demo only when nothing is configured, and only when asked for.
    assert!(validate(json!({ "demo": true })).unwrap().demo_active);
    assert_eq!(validate(json!({})).unwrap_err().path, "models");
    let v = validate(json!({ "demo": true, "models": [ openai_model(&key) ] })).unwrap();
    assert!(!v.demo_active, "configured models win over the demo");
}

#[test]
fn base_url_rules() {
    let (_d, key) = secret_file(0o600);
    for (url, ok) in [
        ("https://api.openai.com/v1", true),
        ("http://127.0.0.1:11434/v1", true),
        ("http://localhost:8000/v1", true),
        ("http://10.0.0.5:8000/v1", false),
        ("ftp://x/v1", false),
        ("https://user:pw@x/v1", false),
        ("https://x/v1?key=1", false),
    ] {
        let mut m = openai_model(&key);
        m["baseUrl"] = json!(url);
        assert_eq!(validate(json!({ "models": [ m ] })).is_ok(), ok, "{url}");
    }
    let mut m = openai_model(&key);
    m["baseUrl"] = json!("http://10.0.0.5:8000/v1");
    m["allowInsecureHttp"] = json!(true);
    assert!(validate(json!({ "models": [ m ] })).is_ok());
}

#[test]
fn local_server_without_key_needs_auth_scheme_none() {
    let m = json!({ "id": "llama", "provider": "openai-chat", "baseUrl": "http://127.0.0.1:11434/v1", "upstreamModel": "llama3.2" });
    assert_eq!(
        validate(json!({ "models": [ m.clone() ] }))
            .unwrap_err()
            .path,
        "models[0].apiKey"
    );
    let mut m = m;
    m["authScheme"] = json!("none");
    let v = validate(json!({ "models": [ m ] })).unwrap();
    assert!(v.models[0].api_key.is_none());
}

#[test]
fn development_identity_only_on_loopback() {
    let ok = validate(json!({ "demo": true, "identity": { "mode": "development" } }));
    assert!(ok.is_ok());
    let e = validate(json!({ "demo": true, "server": { "bind": "0.0.0.0:8787" }, "identity": { "mode": "development" } })).unwrap_err();
    assert_eq!(e.path, "identity.mode");
    assert!(e.message.contains("loopback"));
}

#[test]
fn jwt_needs_exactly_one_key_source() {
    let (_d, key) = secret_file(0o600);
    let e = validate(json!({ "demo": true, "identity": { "mode": "jwt" } })).unwrap_err();
    assert_eq!(e.path, "identity.mode");
    let e = validate(json!({ "demo": true, "identity": { "mode": "jwt", "hs256Secret": { "file": key }, "jwksFile": "/nonexistent" } })).unwrap_err();
    assert_eq!(e.path, "identity.mode");
    let e = validate(
        json!({ "demo": true, "identity": { "mode": "jwt", "hs256Secret": { "file": key } } }),
    )
    .unwrap_err();
    assert_eq!(
        e.path, "identity.hs256Secret",
        "a 12-byte secret is too short: {e}"
    );
    let e = parse(json!({ "identity": { "mode": "magic" } })).unwrap_err();
    assert!(e.path.starts_with("identity"), "{e}");
}

#[test]
fn bounds_cannot_be_switched_off() {
    for key in [
        "maxRequestBytes",
        "maxUpstreamResponseBytes",
        "maxEventsPerCall",
        "idleTimeoutMs",
        "firstByteTimeoutMs",
        "connectTimeoutMs",
        "maxConversationBytes",
    ] {
        let e = validate(json!({ "demo": true, "limits": { key: 0 } })).unwrap_err();
        assert_eq!(e.path, format!("limits.{key}"));
    }
    let e = parse(json!({ "limits": { "maxEventsPerCall": -1 } })).unwrap_err();
    assert_eq!(e.path, "limits.maxEventsPerCall");
    let v = validate(json!({ "demo": true })).unwrap();
    assert_eq!(
        v.limits.max_upstream_response_bytes,
        8 * 1024 * 1024,
        "8 MiB default"
    );
}

#[test]
fn env_overrides_apply_and_are_validated() {
    let mut c = parse(json!({ "demo": false })).unwrap();
    let env = |name: &str| match name {
        "PATCHBRIDGE_BIND" => Some("127.0.0.1:9999".to_owned()),
        "PATCHBRIDGE_DATABASE_URL" => Some("postgres://postgres@127.0.0.1/test".to_owned()),
        "PATCHBRIDGE_DATABASE_SCHEMA" => Some("relay_a".to_owned()),
        "PATCHBRIDGE_DEMO" => Some("1".to_owned()),
        _ => None,
    };
    c.apply_env(env).unwrap();
    let v = c.validate().unwrap();
    assert_eq!(v.bind.port(), 9999);
    assert_eq!(v.database.schema.as_deref(), Some("relay_a"));
    assert!(v.demo_active);
    let mut c = RelayConfig::default();
    let e = c
        .apply_env(|n| (n == "PATCHBRIDGE_DEMO").then(|| "yes".to_owned()))
        .unwrap_err();
    assert_eq!(e.path, "demo (PATCHBRIDGE_DEMO)");
    let mut c = RelayConfig::default();
    c.apply_env(|n| (n == "PATCHBRIDGE_BIND").then(|| "nonsense".to_owned()))
        .unwrap();
    c.demo = true;
    assert_eq!(c.validate().unwrap_err().path, "server.bind");
}

#[test]
fn other_fields_are_validated() {
    let (_d, key) = secret_file(0o600);
    let e = validate(json!({ "models": [ openai_model(&key), openai_model(&key) ] })).unwrap_err();
    assert_eq!(e.path, "models[1].id");
    let e =
        validate(json!({ "models": [ openai_model(&key) ], "defaultModel": "nope" })).unwrap_err();
    assert_eq!(e.path, "defaultModel");
    let e = validate(json!({ "demo": true, "server": { "basePath": "api/" } })).unwrap_err();
    assert_eq!(e.path, "server.basePath");
    let e = validate(
        json!({ "demo": true, "server": { "allowedOrigins": ["https://a.example/path"] } }),
    )
    .unwrap_err();
    assert_eq!(e.path, "server.allowedOrigins[0]");
    let e = validate(json!({ "demo": true, "database": { "url": "mysql://x" } })).unwrap_err();
    assert_eq!(e.path, "database.url");
    let e = validate(json!({ "demo": true, "database": { "url": "postgres://x/y", "schema": "Robert'); DROP" } })).unwrap_err();
    assert_eq!(e.path, "database.schema");
    let e =
        validate(json!({ "demo": true, "server": { "npmDir": "/nonexistent/npm" } })).unwrap_err();
    assert_eq!(e.path, "server.npmDir");
    let mut m = openai_model(&key);
    m["provider"] = json!("anthropic-messages");
    m["reasoning"] = json!({ "budgetTokens": 100 });
    m["maxOutputTokens"] = json!(50);
    let e = validate(json!({ "models": [ m ] })).unwrap_err();
    assert_eq!(
        e.path, "models[0].provider",
        "the adapter's own option checks run at start-up: {e}"
    );
}

#[test]
fn example_configs_are_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/relay-config");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        panic!("{} missing", dir.display())
    };
    let mut n = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        n += 1;
        // Parsing must succeed; validation may only fail on secrets that are not present on this machine.
        let config =
            RelayConfig::from_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if let Err(e) = config.validate() {
            assert!(
                e.path.ends_with("apiKey")
                    || e.path.starts_with("identity.hs256")
                    || e.path.starts_with("server."),
                "{}: {e}",
                path.display()
            );
        }
    }
    assert!(n >= 4, "OpenAI, local, Anthropic and demo examples exist");
}

/// Unknown and duplicate keys are refused at every nesting level (identity variants, secret refs,
/// reasoning, capabilities, limits, database), each error naming where.
#[test]
fn unknown_and_duplicate_keys_at_every_nesting_level() {
    let model = |extra: serde_json::Value| {
        let mut m = json!({ "id": "a", "provider": "anthropic-messages", "baseUrl": "https://x",
                            "upstreamModel": "m", "apiKey": { "env": "K" } });
        common_merge(&mut m, extra);
        json!({ "models": [ m ] })
    };
    for (config, path) in [
        (
            json!({ "identity": { "mode": "jwt", "jwksFile": "/x", "issuerr": "i" } }),
            "identity",
        ),
        (
            json!({ "identity": { "mode": "development", "hedaer": "x" } }),
            "identity",
        ),
        (
            json!({ "identity": { "mode": "trusted-proxy", "header": "x", "bind": 1 } }),
            "identity",
        ),
        (
            json!({ "database": { "url": "sqlite://x", "maxConnection": 2 } }),
            "database.maxConnection",
        ),
        (
            json!({ "limits": { "idleTimeout": 5 } }),
            "limits.idleTimeout",
        ),
        (
            model(json!({ "reasoning": { "effort": "low", "budget": 5 } })),
            "models[0].reasoning",
        ),
        (
            model(json!({ "capabilities": { "tools": true, "vision": true } })),
            "models[0].capabilities",
        ),
        (
            model(json!({ "apiKey": { "env": "K", "file": "/k" } })),
            "models[0].apiKey",
        ),
        (
            model(json!({ "apiKey": { "value": "sk-inline" } })),
            "models[0].apiKey",
        ),
    ] {
        let e = parse(config.clone()).unwrap_err();
        assert!(e.path.starts_with(path), "{config}: {e}");
    }
    for (text, path) in [
        (
            r#"{"identity": {"mode": "jwt", "jwksFile": "/a", "jwksFile": "/b"}}"#,
            "identity",
        ),
        (
            r#"{"limits": {"maxEventsPerCall": 5, "maxEventsPerCall": 6}}"#,
            "limits",
        ),
        (
            r#"{"models": [{"id": "a", "provider": "openai-chat", "baseUrl": "https://x", "upstreamModel": "m", "apiKey": {"env": "A", "env": "B"}}]}"#,
            "models[0].apiKey",
        ),
        (
            r#"{"models": [{"id": "a", "provider": "openai-chat", "baseUrl": "https://x", "upstreamModel": "m", "authScheme": "none", "reasoning": {"effort": "low", "effort": "high"}}]}"#,
            "models[0].reasoning",
        ),
        (
            r#"{"server": {"allowedOrigins": ["https://a"]}, "server": {}}"#,
            "",
        ),
    ] {
        let e = RelayConfig::from_json(text).unwrap_err();
        assert!(e.message.contains("duplicate key"), "{text}: {e}");
        assert!(e.path.starts_with(path), "{text}: {e}");
    }
}

fn common_merge(target: &mut serde_json::Value, extra: serde_json::Value) {
    for (k, v) in extra.as_object().unwrap() {
        target[k] = v.clone();
    }
}

/// Numbers too large for the field (u64 overflow, floats, exponents) are refused, never wrapped or
/// saturated into "no bound"; values past each bound's ceiling are refused too.
#[test]
fn huge_numbers_in_limits_are_refused() {
    for raw in [
        "18446744073709551616",
        "1e30",
        "1.5",
        "99999999999999999999999",
    ] {
        let text = format!(r#"{{"limits": {{"maxUpstreamResponseBytes": {raw}}}}}"#);
        let e = RelayConfig::from_json(&text).unwrap_err();
        assert_eq!(e.path, "limits.maxUpstreamResponseBytes", "{raw}: {e}");
    }
    let e = validate(json!({ "demo": true, "limits": { "idleTimeoutMs": u64::MAX } })).unwrap_err();
    assert_eq!(e.path, "limits.idleTimeoutMs");
    let e =
        validate(json!({ "demo": true, "limits": { "maxRequestBytes": u64::MAX } })).unwrap_err();
    assert_eq!(e.path, "limits.maxRequestBytes");
}

/// The development identity is refused on every non-loopback bind, IPv6 and IPv4-mapped included.
#[test]
fn development_identity_refused_on_any_non_loopback_bind() {
    for bind in [
        "0.0.0.0:8787",
        "[::]:8787",
        "10.1.2.3:8787",
        "[::ffff:127.0.0.1]:8787",
        "[fe80::1%1]:8787",
    ] {
        let e = validate(json!({ "demo": true, "server": { "bind": bind }, "identity": { "mode": "development" } }))
            .unwrap_err();
        assert_eq!(e.path, "identity.mode", "{bind}: {e}");
    }
    for bind in ["127.0.0.1:0", "127.0.0.2:8787", "[::1]:8787"] {
        assert!(
            validate(json!({ "demo": true, "server": { "bind": bind }, "identity": { "mode": "development" } })).is_ok(),
            "{bind}"
        );
    }
}

#[test]
fn join_keeps_the_base_path() {
    use super::validate::join_url;
    let base = url::Url::parse("https://api.openai.com/v1/").unwrap();
    assert_eq!(
        join_url(&base, "/chat/completions").as_str(),
        "https://api.openai.com/v1/chat/completions"
    );
    let base = url::Url::parse("http://127.0.0.1:11434/v1").unwrap();
    assert_eq!(
        join_url(&base, "/chat/completions").as_str(),
        "http://127.0.0.1:11434/v1/chat/completions"
    );
}

/// `capabilities.inputs` resolves with its `images` alias: text always, each kind once, in the protocol's order;
/// an `images` that contradicts `inputs` is refused rather than one of them winning.
#[test]
fn capabilities_inputs_resolve_with_the_images_alias_and_refuse_contradictions() {
    use patchbridge_protocol::InputKind::{Image, Pdf, Text};
    let model = |capabilities: serde_json::Value| {
        std::env::set_var("PB_CONFIG_TEST_KEY", "k");
        json!({ "models": [ { "id": "a", "provider": "anthropic-messages", "baseUrl": "https://x",
                              "upstreamModel": "m", "apiKey": { "env": "PB_CONFIG_TEST_KEY" },
                              "capabilities": capabilities } ] })
    };
    for (capabilities, inputs) in [
        (json!({}), vec![Text, Image]),
        (json!({ "images": false }), vec![Text]),
        (json!({ "images": true }), vec![Text, Image]),
        (json!({ "inputs": ["pdf", "text"] }), vec![Text, Pdf]),
        (
            json!({ "inputs": ["text", "image", "pdf"], "images": true }),
            vec![Text, Image, Pdf],
        ),
    ] {
        let v =
            validate(model(capabilities.clone())).unwrap_or_else(|e| panic!("{capabilities}: {e}"));
        assert_eq!(v.models[0].inputs, inputs, "{capabilities}");
    }
    for capabilities in [
        json!({ "inputs": ["image", "pdf"] }),
        json!({ "inputs": ["text", "text"] }),
        json!({ "inputs": ["text"], "images": true }),
        json!({ "inputs": ["text", "image"], "images": false }),
    ] {
        let e = validate(model(capabilities.clone())).unwrap_err();
        assert_eq!(
            e.path, "models[0].capabilities.inputs",
            "{capabilities}: {e}"
        );
    }
    let e = parse(model(json!({ "inputs": ["text", "audio"] }))).unwrap_err();
    assert!(e.path.starts_with("models[0].capabilities"), "{e}");
}

#[test]
fn workers_default_to_the_cpus_and_are_bounded() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(validate(json!({ "demo": true })).unwrap().workers, cpus);
    let three = validate(json!({ "demo": true, "server": { "workers": 3 } })).unwrap();
    assert_eq!(three.workers, 3);
    for refused in [json!(0), json!(1025)] {
        let e = validate(json!({ "demo": true, "server": { "workers": refused } })).unwrap_err();
        assert_eq!(e.path, "server.workers");
    }
    assert_eq!(
        parse(json!({ "server": { "workers": -1 } }))
            .unwrap_err()
            .path,
        "server.workers"
    );
    let mut config = parse(json!({ "demo": true })).unwrap();
    config
        .apply_env(|n| (n == "PATCHBRIDGE_WORKERS").then(|| "5".to_owned()))
        .unwrap();
    assert_eq!(config.validate().unwrap().workers, 5);
    let e = config
        .apply_env(|n| (n == "PATCHBRIDGE_WORKERS").then(|| "many".to_owned()))
        .unwrap_err();
    assert_eq!(e.path, "server.workers (PATCHBRIDGE_WORKERS)");
}
