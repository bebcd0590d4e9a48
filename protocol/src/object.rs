//! Wire objects are read from JSON objects only.
//!
//! serde's derived `Deserialize` for a struct also takes the array form, its fields in declaration order
//! (`[null, [...], null]` as a `ModelRequest`), which no side of `docs/protocol.md` writes and which would let
//! malformed input through as if it were well formed. Each struct of the protocol therefore derives with
//! `#[serde(remote = "Self")]`, which turns the derive into inherent `deserialize` / `serialize` functions, and
//! [`objects_only!`] implements the traits over them: reading asks the deserializer for a map (an array, a string
//! or a number is refused with serde's usual "invalid type: …, expected struct …" text) and writing is the derive's.
//! The structs the browser runtime reads most have a hand-written `Deserialize` instead (`fields.rs`), which asks
//! for a map the same way, and derive only `Serialize`.

/// Implements `Deserialize` (objects only) and `Serialize` (as derived) for structs deriving with
/// `#[serde(remote = "Self")]`.
macro_rules! objects_only {
    ($($ty:ident),+ $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Fields;

                impl<'de> serde::de::Visitor<'de> for Fields {
                    type Value = $ty;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("struct ", stringify!($ty)))
                    }

                    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<$ty, A::Error> {
                        $ty::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    }
                }

                deserializer.deserialize_map(Fields)
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $ty::serialize(self, serializer)
            }
        }
    )+};
}

pub(crate) use objects_only;
