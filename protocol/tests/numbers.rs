//! JSON numbers read exactly from their text: comparison, integrality, `multipleOf`, and the double range that
//! tool-call arguments must stay within (the relay and the runtime refuse `1e400` alike; big integers pass).

use std::cmp::Ordering;

use patchbridge_protocol::number::Decimal;
use patchbridge_protocol::{unique, Block, Message};

fn d(text: &str) -> Decimal {
    Decimal::parse(text).unwrap_or_else(|| panic!("{text} is JSON number text"))
}

#[test]
fn equal_values_written_differently_are_one_decimal() {
    for group in [
        &["1.50", "1.5", "15e-1", "0.15e1", "0.0015E3", "150e-2"][..],
        &["0", "-0", "0.000", "0e99", "-0.0e-5"],
        &["-12", "-1.2e1", "-120E-1"],
        &["100", "1e2", "1E+2", "0.1e3"],
    ] {
        for text in group {
            assert_eq!(d(text), d(group[0]), "{text} = {}", group[0]);
        }
    }
    assert!(!d("-0").negative);
}

#[test]
fn text_that_is_not_a_json_number_is_refused() {
    for text in [
        "", "-", "01", "1.", ".5", "+1", "1e", "1e+", "0x10", "1_000", " 1", "NaN", "Infinity",
        "--1",
    ] {
        assert_eq!(Decimal::parse(text), None, "{text:?}");
    }
}

#[test]
fn comparison_is_exact_beyond_what_a_double_distinguishes() {
    let ordered = [
        "-1e400",
        "-12345678901234567890123",
        "-2",
        "-1.5",
        "-0.1",
        "-1e-400",
        "0",
        "1e-400",
        "0.1",
        "0.10000000000000000001",
        "1",
        "9007199254740992",
        "9007199254740993",
        "12345678901234567890123",
        "1e400",
    ];
    for (i, a) in ordered.iter().enumerate() {
        for (j, b) in ordered.iter().enumerate() {
            assert_eq!(d(a).cmp(&d(b)), i.cmp(&j), "{a} vs {b}");
        }
    }
    assert_eq!(d("2.0").cmp(&d("2")), Ordering::Equal);
}

#[test]
fn integers_are_whole_values_in_any_notation() {
    for text in [
        "0",
        "-0.0",
        "3",
        "3.0",
        "3e2",
        "1.5e1",
        "-7",
        "123456789012345678901234567890",
    ] {
        assert!(d(text).is_integer(), "{text}");
    }
    for text in ["0.5", "1.5", "1e-1", "12.0001", "-3.25"] {
        assert!(!d(text).is_integer(), "{text}");
    }
}

#[test]
fn multiple_of_is_exact_for_decimal_divisors() {
    let yes = [
        ("10", "5"),
        ("4.5", "1.5"),
        ("0.3", "0.1"),
        ("0", "7"),
        ("3e30", "3e29"),
        ("-12", "4"),
        ("0.0075", "0.0001"),
        ("123456789012345678901234567890", "10"),
    ];
    for (x, m) in yes {
        assert_eq!(
            d(x).is_multiple_of(&d(m)),
            Some(true),
            "{x} multiple of {m}"
        );
    }
    let no = [
        ("1e30", "3e29"),
        ("10", "3"),
        ("4.5", "2"),
        ("0.35", "0.1"),
        ("1", "0.3"),
        ("0.00751", "0.0001"),
        ("1e-5", "1e-4"),
    ];
    for (x, m) in no {
        assert_eq!(
            d(x).is_multiple_of(&d(m)),
            Some(false),
            "{x} multiple of {m}"
        );
    }
    assert_eq!(d("5").is_multiple_of(&d("0")), None);
    assert_eq!(d("5").is_multiple_of(&d("1234567891")), None);
    assert_eq!(
        d("2469135780").is_multiple_of(&d("12345678.9e1")),
        Some(true)
    );
}

/// The boundary: 2^1024 − 2^970 is the least magnitude that rounds to infinity.
#[test]
fn the_double_range_ends_where_rounding_reaches_infinity() {
    let largest = "1.7976931348623157e308";
    let overflow = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
    let just_below = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.99";
    for text in [
        largest,
        just_below,
        "1.7976931348623158e308",
        "1e308",
        "-1e308",
        "1e-400",
        "123456789012345678901234567890",
    ] {
        assert!(d(text).within_double_range(), "{text}");
        assert!(
            text.parse::<f64>().unwrap().is_finite(),
            "{text} (float parser)"
        );
    }
    for text in [
        overflow,
        "1.797693134862315808e308",
        "1e309",
        "-1e400",
        "1e99999999999999999999999",
    ] {
        assert!(!d(text).within_double_range(), "{text}");
        assert!(
            text.parse::<f64>().unwrap().is_infinite(),
            "{text} (float parser)"
        );
    }
}

/// Many numbers near the boundary and elsewhere: the exact reading agrees with the float parser.
#[test]
fn the_double_range_agrees_with_the_float_parser() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let digits = 1 + next() % 25;
        let mantissa: String = (0..digits)
            .map(|i| {
                let digit = next() % 10;
                char::from(b'0' + if i == 0 { 1 + digit % 9 } else { digit } as u8)
            })
            .collect();
        let point = next() % (digits + 1);
        let (int, frac) = mantissa.split_at(point as usize);
        let int = if int.is_empty() { "0" } else { int };
        let frac = if frac.is_empty() {
            String::new()
        } else {
            format!(".{frac}")
        };
        let exponent = 280 + (next() % 60) as i64 - (digits as i64);
        let text = format!("{int}{frac}e{exponent}");
        let exact = d(&text).within_double_range();
        let float = text.parse::<f64>().unwrap().is_finite();
        assert_eq!(exact, float, "{text}");
    }
}

#[test]
fn tool_call_arguments_refuse_numbers_beyond_a_double_and_keep_big_integers() {
    for input in [
        r#"{"n":1e400}"#,
        r#"{"deep":[{"n":-1e309}]}"#,
        r#"{"n":2e308}"#,
    ] {
        let error = unique::from_str(input).unwrap_err().to_string();
        assert!(
            error.contains("outside the range of a double"),
            "{input}: {error}"
        );
        let block = format!(r#"{{"type":"tool-call","callId":"c1","name":"t","input":{input}}}"#);
        let error = serde_json::from_str::<Block>(&block)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("outside the range of a double"),
            "{block}: {error}"
        );
    }
    let fine =
        r#"{"big":123456789012345678901234567890,"max":1.7976931348623157e+308,"tiny":1e-400}"#;
    assert_eq!(unique::from_str(fine).unwrap().to_string(), fine);
    let message = format!(
        r#"{{"id":"a1","role":"assistant","blocks":[{{"type":"tool-call","callId":"c1","name":"t","input":{fine}}}]}}"#
    );
    let parsed: Message = serde_json::from_str(&message).unwrap();
    assert_eq!(serde_json::to_string(&parsed).unwrap(), message);
}
