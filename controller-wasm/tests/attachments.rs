//! Attached files on `send` and on load: documents and base64 images are checked before anything is sent (type,
//! name, encoding, the file's size, the message's files together, the conversation with the new message), each
//! refusal with its own code and the file named; a stored document is checked for type and encoding on load but
//! never for size.

mod support;

use futures::future::FutureExt;
use patchbridge_agent::core::protocol::{
    Block, ConversationContext, ConversationSummary, DocumentSource, ImageSource, Message, Role,
    StopReason,
};
use patchbridge_agent::core::*;
use serde_json::json;
use support::*;

fn pdf(name: &str, data: &str) -> Block {
    Block::Document {
        name: name.into(),
        source: DocumentSource::Base64 {
            media_type: "application/pdf".into(),
            data: data.into(),
        },
    }
}

fn text_file(name: &str, media_type: &str, text: &str) -> Block {
    Block::Document {
        name: name.into(),
        source: DocumentSource::Text {
            media_type: media_type.into(),
            text: text.into(),
        },
    }
}

fn image(media_type: &str, data: &str) -> Block {
    Block::Image {
        source: ImageSource::Base64 {
            media_type: media_type.into(),
            data: data.into(),
        },
    }
}

/// Base64 of `bytes` bytes of a PDF (`%PDF-` then `A`s), padded like any encoder would.
fn pdf_data(bytes: usize) -> String {
    let mut raw = b"%PDF-1.7\n".to_vec();
    raw.resize(bytes, b'A');
    base64(&raw)
}

fn base64(raw: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in raw.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (*b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn setup_with(limits: AttachmentLimits, scripts: Vec<Vec<Step>>) -> Setup {
    let mut s = setup(scripts);
    let store = s.store.clone();
    let model = s.model.clone();
    s.controller = Controller::new(
        runtime(model, ManualPlatform::new()),
        ControllerOptions {
            store: Some(store),
            model: None,
            attachments: limits,
        },
    );
    s
}

/// Sends `blocks` and gives the error it was refused with at once (no turn started, nothing sent).
fn refused(s: &Setup, blocks: Vec<Block>) -> AgentError {
    let error = s
        .controller
        .send(blocks)
        .now_or_never()
        .expect("a refusal settles at once")
        .unwrap_err();
    assert_eq!(s.model.calls(), 0, "nothing is sent");
    assert!(s.controller.state().messages.is_empty(), "nothing is added");
    assert_eq!(s.controller.state().status, Status::Idle);
    error
}

#[test]
fn a_pdf_and_a_text_file_are_sent_to_the_model_as_document_blocks() {
    let mut s = setup(vec![text_reply("m1", "read", StopReason::EndTurn)]);
    let blocks = vec![
        Block::text("summarise both"),
        pdf("report.pdf", &pdf_data(1000)),
        text_file("notes.md", "text/markdown", "# Notes\n- one"),
    ];
    let turn = s.spawn(s.controller.send(blocks.clone()));
    assert!(matches!(*turn.borrow(), Some(Ok(Outcome::Completed))));
    let request = s.model.requests.borrow()[0].clone();
    assert_eq!(request.messages[0].blocks, blocks);
    let stored = s.store.conversations.borrow()[0].1.clone();
    assert_eq!(stored.messages[0].blocks, blocks, "saved as sent");
}

#[test]
fn a_file_over_max_file_bytes_is_refused_before_anything_is_sent_and_the_error_names_it() {
    let limits = AttachmentLimits {
        max_file_bytes: 2000,
        ..AttachmentLimits::DEFAULT
    };
    let s = setup_with(limits, vec![]);
    let error = refused(
        &s,
        vec![
            Block::text("look"),
            pdf("small.pdf", &pdf_data(2000)),
            pdf("Quarterly report.pdf", &pdf_data(2001)),
        ],
    );
    assert_eq!(error.code, ErrorCode::AttachmentTooLarge);
    assert!(
        error.message.contains("\"Quarterly report.pdf\""),
        "{}",
        error.message
    );
    assert_eq!(
        error.details,
        Some(
            json!({ "name": "Quarterly report.pdf", "mediaType": "application/pdf", "bytes": 2001, "limit": 2000 })
        )
    );
}

#[test]
fn a_text_file_counts_its_utf8_bytes_and_an_image_its_decoded_bytes() {
    let limits = AttachmentLimits {
        max_file_bytes: 8,
        ..AttachmentLimits::DEFAULT
    };
    let s = setup_with(limits, vec![]);
    // Four "é" are four characters but eight bytes: within the limit; a fifth is over it.
    let error = refused(&s, vec![text_file("a.txt", "text/plain", "ééééé")]);
    assert_eq!(error.code, ErrorCode::AttachmentTooLarge);
    assert_eq!(error.details.unwrap()["bytes"], json!(10));
    // Twelve base64 characters are nine bytes of image.
    let error = refused(&s, vec![image("image/png", "iVBORw0KGgoA")]);
    assert_eq!(error.code, ErrorCode::AttachmentTooLarge);
    assert_eq!(
        error.details,
        Some(json!({ "image": 1, "mediaType": "image/png", "bytes": 9, "limit": 8 }))
    );
    let accepted = s
        .controller
        .send(vec![text_file("b.txt", "text/plain", "éééé")]);
    assert_eq!(s.controller.state().status, Status::Running);
    drop(accepted);
}

#[test]
fn the_files_of_one_message_together_are_held_to_max_message_bytes() {
    let limits = AttachmentLimits {
        max_file_bytes: 1000,
        max_message_bytes: 1500,
        ..AttachmentLimits::DEFAULT
    };
    let s = setup_with(limits, vec![]);
    let error = refused(
        &s,
        vec![pdf("a.pdf", &pdf_data(800)), pdf("b.pdf", &pdf_data(800))],
    );
    assert_eq!(error.code, ErrorCode::MessageTooLarge);
    assert_eq!(error.details, Some(json!({ "bytes": 1600, "limit": 1500 })));
}

#[test]
fn media_types_outside_the_closed_lists_are_refused_with_the_type_code() {
    let s = setup(vec![]);
    for (block, media_type) in [
        (
            text_file("main.ts", "video/mp2t", "let a = 1;"),
            "video/mp2t",
        ),
        (text_file("notes.txt", "", "x"), ""),
        (
            text_file("report.pdf", "application/pdf", "%PDF-1.7"),
            "application/pdf",
        ),
        (
            Block::Document {
                name: "data.csv".into(),
                source: DocumentSource::Base64 {
                    media_type: "text/csv".into(),
                    data: "YSxi".into(),
                },
            },
            "text/csv",
        ),
        (image("image/svg+xml", "PHN2Zz4="), "image/svg+xml"),
    ] {
        let error = refused(&s, vec![block]);
        assert_eq!(error.code, ErrorCode::AttachmentType, "{media_type:?}");
        assert_eq!(error.details.unwrap()["mediaType"], json!(media_type));
    }
}

#[test]
fn bad_names_and_encodings_are_refused_as_invalid_attachments() {
    let s = setup(vec![]);
    for block in [
        pdf("", &pdf_data(20)),
        pdf("reports/q3.pdf", &pdf_data(20)),
        pdf(&"x".repeat(256), &pdf_data(20)),
        pdf(
            "a.pdf",
            &format!("data:application/pdf;base64,{}", pdf_data(20)),
        ),
        pdf("png.pdf", "iVBORw0KGgo="),
        image("image/png", "not base64!"),
    ] {
        let error = refused(&s, vec![block.clone()]);
        assert_eq!(error.code, ErrorCode::AttachmentInvalid, "{block:?}");
    }
}

#[test]
fn a_message_that_would_take_the_conversation_past_its_limit_is_refused_and_the_conversation_stays()
{
    let limits = AttachmentLimits {
        max_conversation_bytes: 3000,
        ..AttachmentLimits::DEFAULT
    };
    let mut s = setup_with(
        limits,
        vec![
            text_reply("m1", "first answer", StopReason::EndTurn),
            text_reply("m2", "second answer", StopReason::EndTurn),
        ],
    );
    let first = s.spawn(
        s.controller
            .send(vec![Block::text("one"), pdf("a.pdf", &pdf_data(1500))]),
    );
    assert!(matches!(*first.borrow(), Some(Ok(Outcome::Completed))));
    let saved = s.store.saves.get() + s.store.creates.get();
    let before = s.controller.state().messages.clone();

    let error = s
        .controller
        .send(vec![Block::text("two"), pdf("b.pdf", &pdf_data(1000))])
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::ConversationTooLarge);
    let details = error.details.unwrap();
    assert_eq!(details["limit"], json!(3000));
    assert!(details["bytes"].as_u64().unwrap() > 3000);
    assert_eq!(s.model.calls(), 1, "the refused message was not sent");
    assert_eq!(s.controller.state().messages, before, "nothing was added");
    assert_eq!(
        s.store.saves.get() + s.store.creates.get(),
        saved,
        "nothing was saved"
    );

    // A message without the file still fits: the person can go on.
    let second = s.spawn(
        s.controller
            .send(vec![Block::text("two, without the file")]),
    );
    assert!(matches!(*second.borrow(), Some(Ok(Outcome::Completed))));
}

#[test]
fn the_conversation_size_counts_what_is_saved() {
    // The check measures the JSON text of `{ messages, modelState }`; pin it against the store's own copy.
    let mut s = setup(vec![text_reply("m1", "ok", StopReason::EndTurn)]);
    let turn = s.spawn(s.controller.send(vec![Block::text("hello")]));
    assert!(matches!(*turn.borrow(), Some(Ok(Outcome::Completed))));
    let stored = s.store.conversations.borrow()[0].1.clone();
    let bytes = serde_json::to_string(&stored).unwrap().len() as u64;
    let messages = stored.messages.clone();
    // A conversation exactly at its limit loads and can be regenerated, but takes no new message.
    let s2 = setup_with(
        AttachmentLimits {
            max_conversation_bytes: bytes,
            ..AttachmentLimits::DEFAULT
        },
        vec![],
    );
    s2.store.conversations.borrow_mut().push((
        ConversationSummary {
            id: "c1".into(),
            title: "t".into(),
            revision: 1,
            created_at: String::new(),
            updated_at: String::new(),
        },
        stored,
    ));
    let mut pool = futures::executor::LocalPool::new();
    pool.run_until(s2.controller.load_conversation("c1"))
        .unwrap();
    assert_eq!(*s2.controller.state().messages, messages);
    let error = s2
        .controller
        .send(vec![Block::text("x")])
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::ConversationTooLarge);
    let over = error.details.unwrap()["bytes"].as_u64().unwrap() - bytes;
    // The new message `{"id":"msg_…","role":"user","blocks":[{"type":"text","text":"x"}]}` and its comma.
    assert!((60..100).contains(&over), "{over}");
}

fn stored_with(blocks: Vec<Block>) -> Setup {
    let s = setup_with(
        AttachmentLimits {
            max_file_bytes: 10,
            max_message_bytes: 10,
            max_conversation_bytes: 1_000_000,
        },
        vec![],
    );
    s.store.conversations.borrow_mut().push((
        ConversationSummary {
            id: "c1".into(),
            title: "t".into(),
            revision: 1,
            created_at: String::new(),
            updated_at: String::new(),
        },
        ConversationContext {
            messages: vec![Message {
                id: "u1".into(),
                role: Role::User,
                blocks,
            }],
            model_state: None,
        },
    ));
    s
}

#[test]
fn a_stored_document_over_todays_size_limits_still_loads() {
    let s = stored_with(vec![pdf("big.pdf", &pdf_data(500))]);
    let mut pool = futures::executor::LocalPool::new();
    pool.run_until(s.controller.load_conversation("c1"))
        .expect("sizes are not checked on load");
    assert_eq!(s.controller.state().messages.len(), 1);
}

#[test]
fn a_stored_document_of_a_type_outside_the_list_is_a_corrupt_conversation() {
    for block in [
        text_file("main.ts", "video/mp2t", "x"),
        pdf("a.pdf", "iVBORw0KGgo="),
        text_file("", "text/plain", "x"),
    ] {
        let s = stored_with(vec![block]);
        let mut pool = futures::executor::LocalPool::new();
        let error = pool
            .run_until(s.controller.load_conversation("c1"))
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::ConversationCorrupt);
        assert!(error.message.contains("document"), "{}", error.message);
        assert!(s.controller.state().messages.is_empty());
    }
}

#[test]
fn a_document_in_an_assistant_message_is_refused_as_start_input() {
    let harness_input = vec![
        user("q"),
        Message {
            id: "a1".into(),
            role: Role::Assistant,
            blocks: vec![text_file("a.txt", "text/plain", "x")],
        },
    ];
    let error = patchbridge_agent::core::messages::validate_messages(&harness_input).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput);
}

#[test]
fn the_attachments_option_overrides_given_sizes_and_refuses_unknown_keys_and_bad_numbers() {
    let limits = AttachmentLimits::from_partial_json(
        &json!({ "maxFileBytes": 1000, "maxConversationBytes": 5e6 }),
    )
    .unwrap();
    assert_eq!(
        limits,
        AttachmentLimits {
            max_file_bytes: 1000,
            max_conversation_bytes: 5_000_000,
            ..AttachmentLimits::DEFAULT
        }
    );
    assert_eq!(
        AttachmentLimits::from_partial_json(&json!(null)).unwrap(),
        AttachmentLimits::DEFAULT
    );
    for bad in [
        json!({ "maxFileSize": 1 }),
        json!({ "maxFileBytes": 0 }),
        json!({ "maxFileBytes": 1.5 }),
        json!({ "maxMessageBytes": "4MB" }),
        json!([1000]),
    ] {
        let error = AttachmentLimits::from_partial_json(&bad).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidOptions, "{bad}");
    }
}

#[test]
fn a_conversation_started_with_only_a_file_is_titled_with_its_name() {
    let mut s = setup(vec![text_reply("m1", "a report", StopReason::EndTurn)]);
    let turn = s.spawn(
        s.controller
            .send(vec![pdf("Q3 report.pdf", &pdf_data(100))]),
    );
    assert!(matches!(*turn.borrow(), Some(Ok(Outcome::Completed))));
    assert_eq!(s.store.conversations.borrow()[0].0.title, "Q3 report.pdf");
}
