//! The relay client reads error envelopes by hand (`core::relay::error_body`) instead of through the protocol
//! types' derives, which were ~4 KiB gzip of the wasm for this one error path. Only acceptance is observable (an
//! answer that does not read as an envelope is reported as `relayCode: ""` with its HTTP status), so this test
//! pins that for a corpus of answers the hand reader accepts exactly what
//! `serde_json::from_str::<ErrorEnvelope>` accepts, with the same values.

use patchbridge_agent::core::protocol::ErrorEnvelope;
use patchbridge_agent::core::relay::error_body;

fn same(text: &str) {
    let derived = serde_json::from_str::<ErrorEnvelope>(text)
        .ok()
        .map(|e| e.error);
    assert_eq!(error_body(text), derived, "differs for {text}");
}

/// Values of every JSON kind, and the number texts where a `u64` field draws its line.
const VALUES: &[&str] = &[
    r#""text""#,
    r#""""#,
    "null",
    "true",
    "false",
    "0",
    "7",
    "-0",
    "-1",
    "1.0",
    "1e3",
    "18446744073709551615",
    "18446744073709551616",
    "1e400",
    "[]",
    r#"["a"]"#,
    "{}",
    r#"{"kind":"tokens","max":5}"#,
    r#"{"a":1,"a":2}"#,
];

const BODY_KEYS: &[&str] = &[
    "code",
    "message",
    "currentRevision",
    "messageId",
    "retryable",
    "limit",
    "retryAfterSeconds",
    "unknown",
];

#[test]
fn every_field_of_the_body_accepts_what_the_derive_accepts() {
    for key in BODY_KEYS {
        for value in VALUES {
            same(&format!(r#"{{"error":{{"code":"X","{key}":{value}}}}}"#));
            same(&format!(r#"{{"error":{{"{key}":{value},"code":"X"}}}}"#));
            same(&format!(r#"{{"error":{{"{key}":{value}}}}}"#));
        }
    }
}

const LIMIT_KEYS: &[&str] = &["kind", "max", "windowSeconds", "sliding", "model", "other"];

#[test]
fn every_field_of_a_spending_limit_accepts_what_the_derive_accepts() {
    for key in LIMIT_KEYS {
        for value in VALUES {
            same(&format!(
                r#"{{"error":{{"code":"SPENDING_LIMIT_REACHED","limit":{{"kind":"tokens","max":5,"{key}":{value}}}}}}}"#
            ));
            same(&format!(
                r#"{{"error":{{"code":"SPENDING_LIMIT_REACHED","limit":{{"{key}":{value}}}}}}}"#
            ));
        }
    }
}

#[test]
fn envelopes_as_relays_write_them_read_whole() {
    for text in [
        r#"{"error":{"code":"REVISION_CONFLICT","message":"stale","currentRevision":4}}"#,
        r#"{"error":{"code":"MODEL_STATE_MISMATCH","message":"m","messageId":"a1","retryable":false}}"#,
        r#"{"error":{"code":"SPENDING_LIMIT_REACHED","message":"spent","retryable":true,"retryAfterSeconds":30,"limit":{"kind":"requests","max":100,"windowSeconds":60,"sliding":true,"model":"m1"}}}"#,
        r#"{"error":{"code":"NEW_CODE","message":"later","future":{"x":[1,2,{"y":null}]}},"traceId":"t"}"#,
        " \n{ \"error\" : { \"code\" : \"X\" } } \n",
    ] {
        same(text);
        assert!(error_body(text).is_some(), "{text}");
    }
}

#[test]
fn repeated_keys_non_objects_and_malformed_text_read_as_the_derive_reads_them() {
    for text in [
        r#"{"error":{"code":"X"},"error":{"code":"Y"}}"#,
        r#"{"error":{"code":"X","code":"Y"}}"#,
        r#"{"error":{"code":"X","message":"a","message":"b"}}"#,
        r#"{"error":{"code":"X","limit":{"kind":"k","max":1,"max":2}}}"#,
        r#"{"error":{"code":"X","limit":null,"limit":null}}"#,
        r#"{"error":{"code":"X"},"other":1,"other":2}"#,
        r#"{"error":{"code":"X","other":{"a":1,"a":2}}}"#,
        r#"{"error":{"code":"X"}} trailing"#,
        r#"{"error":{"code":"X"},}"#,
        r#"{"error":{"code":"X"}"#,
        r#"{"error":null}"#,
        r#"{"error":"X"}"#,
        r#"{"error":[]}"#,
        r#"{}"#,
        "",
        "null",
        "5",
        r#""error""#,
        "<html>Bad Gateway</html>",
        r#"{"Error":{"code":"X"}}"#,
        r#"{"error":{"Code":"X"}}"#,
        r#"{"err\u006fr":{"c\u006fde":"X"}}"#,
    ] {
        same(text);
    }
}

#[test]
fn the_array_forms_of_the_derive_read_the_same() {
    for text in [
        r#"[{"code":"X"}]"#,
        r#"[{"code":"X"},1]"#,
        "[]",
        r#"{"error":["X"]}"#,
        r#"{"error":["X","m"]}"#,
        r#"{"error":["X","m",3,"id",true,null,9]}"#,
        r#"{"error":["X","m",3,"id",true,null,9,10]}"#,
        r#"{"error":["X",null]}"#,
        r#"{"error":["X","m",null,null,null,["k",5]]}"#,
        r#"{"error":["X","m",null,null,null,["k",5,60,true,"m"]]}"#,
        r#"{"error":["X","m",null,null,null,["k",5,60,true,"m",0]]}"#,
        r#"{"error":["X","m",null,null,null,["k"]]}"#,
        r#"{"error":["X","m",null,null,null,{"kind":"k","max":1}]}"#,
        r#"{"error":[5]}"#,
        r#"[["X"]]"#,
    ] {
        same(text);
    }
}
