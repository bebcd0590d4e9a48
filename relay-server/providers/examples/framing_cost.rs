//! Prints what SSE framing costs: our [`SseFramer`] against `eventsource-stream` (the parser the relay used
//! before it) in the same run, on (1) a recorded-size stream of small events delivered one event per chunk,
//! as an HTTP/1.1 chunked upstream delivers them, and (2) one long `data:` line (a large tool-call argument)
//! delivered in TLS-record-sized pieces, where a parser that re-reads its pending buffer per chunk costs time
//! quadratic in the line's length. A benchmark, not a test: figures vary with the machine and its load.
//!
//!     cargo run --release -p patchbridge-providers --example framing_cost

use std::hint::black_box;
use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use patchbridge_providers::sse::SseFramer;

fn ours(pieces: &[Vec<u8>]) -> usize {
    let mut framer = SseFramer::new();
    let mut out = Vec::new();
    let mut count = 0;
    for piece in pieces {
        framer.push(piece, &mut out).unwrap();
        count += out.len();
        out.clear();
    }
    count
}

fn theirs(pieces: &[Vec<u8>]) -> usize {
    let stream = futures_util::stream::iter(pieces.iter().map(Ok::<_, std::convert::Infallible>));
    futures_executor::block_on(stream.eventsource().count())
}

/// Median wall time of `rounds` runs of `f`.
fn time(rounds: usize, mut f: impl FnMut() -> usize) -> Duration {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            black_box(f());
            started.elapsed()
        })
        .collect();
    times.sort();
    times[rounds / 2]
}

fn report(name: &str, pieces: &[Vec<u8>], unit: f64, unit_name: &str, rounds: usize) {
    assert_eq!(ours(pieces), theirs(pieces), "both frame the same messages");
    let a = time(rounds, || ours(pieces));
    let b = time(rounds, || theirs(pieces));
    println!(
        "{name:<44} SseFramer {:>10.3} µs/{unit_name}   eventsource-stream {:>12.3} µs/{unit_name}   ratio {:>8.1}x",
        a.as_secs_f64() * 1e6 / unit,
        b.as_secs_f64() * 1e6 / unit,
        b.as_secs_f64() / a.as_secs_f64()
    );
}

fn main() {
    // (1) 1,000 Chat Completions text chunks, one SSE message per upstream chunk.
    let event = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok \"},\"finish_reason\":null}]}\n\n";
    let small: Vec<Vec<u8>> = (0..1_000).map(|_| event.as_bytes().to_vec()).collect();
    report(
        "1,000 small events, one per chunk",
        &small,
        1_000.0,
        "event",
        51,
    );

    // (2) One data line of N bytes in 1,400-byte pieces (a TLS record's payload, about).
    for size in [64 * 1024, 256 * 1024, 1024 * 1024] {
        let mut body = b"data: \"".to_vec();
        body.extend(std::iter::repeat_n(b'x', size));
        body.extend_from_slice(b"\"\n\n");
        let pieces: Vec<Vec<u8>> = body.chunks(1_400).map(<[u8]>::to_vec).collect();
        report(
            &format!("one {} KiB line in 1,400-byte pieces", size / 1024),
            &pieces,
            (size / 1024) as f64,
            "KiB",
            5,
        );
    }
}
