//! [`wire!`](crate::wire): one declaration per wire type, from which its reader, its writer and its TypeScript
//! declaration are generated.
//!
//! A wire type is declared once, as a struct or an internally tagged enum (`{ "type": "…", … }`) whose every
//! field names its JSON key and how it may be absent:
//!
//! ```text
//! patchbridge_protocol::wire! {
//!     strict, ts(feature = "ts");
//!     /// The whole conversation so far plus this turn's tools.
//!     #[derive(Debug, Clone, PartialEq)]
//!     pub struct ModelRequest {
//!         pub model: Option<String> = "model" optional,
//!         pub messages: Vec<Message> = "messages",
//!         pub tools: Vec<ToolDefinition> = "tools" default,
//!     }
//! }
//! ```
//!
//! The header says how the type is read and whether it has a TypeScript declaration:
//! - `strict`: read, an unknown key refused (requests, stored data); `lenient`: read, an unknown key skipped
//!   (what a relay or a model answers, which a newer version may extend); `written`: not read here (the
//!   runtime's own outputs, and [`Source`](crate::Source), whose reader checks its links by hand);
//! - `+ value` (structs): also read from a `serde_json::Value` (a struct inside a tagged enum's variant);
//! - `ts(cfg)`: derives ts-rs's `TS` when `cfg` holds (`feature = "ts"` here, `test` in the runtime), with the
//!   keys and optional fields below; field attributes such as `ts(type = "JsonObject")` pass through.
//!
//! A field with no rule is required (an `Option` then reads `null` as `None` but a missing key is an error, as
//! `modelState` must be) and always written; `optional` (an `Option`) may be absent, reads absent as `None`, is
//! not written when `None`, and is `key?: T` in TypeScript; `default` may be absent, reads absent as
//! `Default::default()` and is always written; `omit_empty` (a `Vec`) may be absent, reads absent as empty, is
//! not written when empty, and is `key?: T` in TypeScript.
//!
//! What it generates, all from that one list:
//! - the type itself, with a derived `Serialize` (what the relay writes text with) carrying the keys and skip
//!   rules as serde attributes;
//! - [`ToValue`](crate::ToValue) (what the browser runtime writes): the same keys, order and skip rules;
//! - for `strict` and `lenient`, `Deserialize`: a struct through the one key loop of `fields.rs`, an enum
//!   through the one tagged reader of `tagged.rs` (and `FromValue`, reading it from a `Value`); the error
//!   texts are serde's derive's (`tests/fields_equivalence.rs`, `tests/tagged_equivalence.rs`);
//! - for an enum, `TAGS` (the `type` names in declaration order) and `type_name()`.
//!
//! An enum's variants are `Name = "tag" { fields }`, or `Name = "tag"` for a variant without fields (which,
//! like serde's internally tagged unit variants, ignores other keys).

/// Declares a wire type (see the [module docs](crate::declare)).
#[macro_export]
macro_rules! wire {
    // ---- Header: policy, extras, TypeScript cfg (absent: never).
    ($policy:ident $(+ $extra:ident)* , ts($ts:meta); $($item:tt)*) => {
        $crate::wire!(@item [$policy] [$($extra)*] [$ts] $($item)*);
    };
    ($policy:ident $(+ $extra:ident)* ; $($item:tt)*) => {
        $crate::wire!(@item [$policy] [$($extra)*] [any()] $($item)*);
    };

    // ---- A struct.
    (@item [$policy:ident] [$($extra:ident)*] [$ts:meta]
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty = $key:literal $($mode:ident)? ),* $(,)?
        }
    ) => {
        $crate::wire!(@fields [$ts] [@struct_def [$ts] [$(#[$meta])* $vis struct $name]] []
            $( $(#[$fmeta])* $fvis $field : $ty = $key $($mode)? , )*);

        impl $crate::write::ToValue for $name {
            fn to_value(&self) -> $crate::__private::Value {
                let mut object = $crate::write::Object::new();
                $( $crate::wire!(@put object $key (&self.$field) $($mode)?); )*
                object.done()
            }
        }

        $crate::wire!(@struct_read [$policy] $name { $( $field : $ty = $key $($mode)? ),* });
        $crate::wire!(@struct_extra [$($extra)*] [$policy] $name { $( $field : $ty = $key $($mode)? ),* });
    };

    // ---- An internally tagged enum.
    (@item [$policy:ident] [] [$ts:meta]
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $tag:literal $({
                $( $(#[$fmeta:meta])* $field:ident : $ty:ty = $key:literal $($mode:ident)? ),* $(,)?
            })? ),* $(,)?
        }
    ) => {
        $crate::wire!(@enum_def [$ts] [$(#[$meta])* $vis enum $name] []
            $( $(#[$vmeta])* $variant = $tag $({ $( $(#[$fmeta])* $field : $ty = $key $($mode)? , )* })? , )*);

        impl $name {
            /// The `type` of each variant, in declaration order.
            pub const TAGS: &'static [&'static str] = &[$($tag),*];

            /// This value's `type`.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $( $name::$variant { .. } => $tag, )*
                }
            }
        }

        impl $crate::write::ToValue for $name {
            fn to_value(&self) -> $crate::__private::Value {
                let mut object = $crate::write::Object::tagged(self.type_name());
                match self {
                    $( $name::$variant $({ $($field),* })? => {
                        $($( $crate::wire!(@put object $key ($field) $($mode)?); )*)?
                    } )*
                }
                object.done()
            }
        }

        $crate::wire!(@enum_read [$policy] $name { $( $variant $({ $( $field : $ty = $key $($mode)? ),* })? ),* });
    };

    // ---- Definitions: each field gets its serde and ts attributes from its rule (`@fields` munches the list
    // into `[…]` and hands it to the continuation `[@…]`).
    (@fields [$ts:meta] [$($then:tt)*] [$($done:tt)*]) => {
        $crate::wire!($($then)* [$($done)*]);
    };
    (@fields [$ts:meta] [$($then:tt)*] [$($done:tt)*]
        $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty = $key:literal , $($rest:tt)*
    ) => {
        $crate::wire!(@fields [$ts] [$($then)*] [$($done)*
            $(#[$fmeta])* #[serde(rename = $key)] #[cfg_attr($ts, ts(rename = $key))]
            $fvis $field : $ty,
        ] $($rest)*);
    };
    (@fields [$ts:meta] [$($then:tt)*] [$($done:tt)*]
        $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty = $key:literal default , $($rest:tt)*
    ) => {
        $crate::wire!(@fields [$ts] [$($then)*] [$($done)*
            $(#[$fmeta])* #[serde(rename = $key)] #[cfg_attr($ts, ts(rename = $key))]
            $fvis $field : $ty,
        ] $($rest)*);
    };
    (@fields [$ts:meta] [$($then:tt)*] [$($done:tt)*]
        $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty = $key:literal optional , $($rest:tt)*
    ) => {
        $crate::wire!(@fields [$ts] [$($then)*] [$($done)*
            $(#[$fmeta])*
            #[serde(rename = $key, skip_serializing_if = "Option::is_none")]
            #[cfg_attr($ts, ts(rename = $key, optional))]
            $fvis $field : $ty,
        ] $($rest)*);
    };
    (@fields [$ts:meta] [$($then:tt)*] [$($done:tt)*]
        $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty = $key:literal omit_empty , $($rest:tt)*
    ) => {
        $crate::wire!(@fields [$ts] [$($then)*] [$($done)*
            $(#[$fmeta])*
            #[serde(rename = $key, skip_serializing_if = "Vec::is_empty")]
            #[cfg_attr($ts, ts(rename = $key, optional = nullable))]
            $fvis $field : $ty,
        ] $($rest)*);
    };

    (@struct_def [$ts:meta] [$($head:tt)*] [$($fields:tt)*]) => {
        #[derive($crate::__private::serde::Serialize)]
        #[serde(crate = "patchbridge_protocol::__private::serde")]
        #[cfg_attr($ts, derive(ts_rs::TS))]
        $($head)* { $($fields)* }
    };

    // Variants are munched one by one, each one's fields through `@fields`.
    (@enum_def [$ts:meta] [$($head:tt)*] [$($done:tt)*]) => {
        #[derive($crate::__private::serde::Serialize)]
        #[serde(crate = "patchbridge_protocol::__private::serde", tag = "type")]
        #[cfg_attr($ts, derive(ts_rs::TS))]
        #[cfg_attr($ts, ts(tag = "type"))]
        $($head)* { $($done)* }
    };
    (@enum_def [$ts:meta] [$($head:tt)*] [$($done:tt)*]
        $(#[$vmeta:meta])* $variant:ident = $tag:literal , $($rest:tt)*
    ) => {
        $crate::wire!(@enum_def [$ts] [$($head)*] [$($done)*
            $(#[$vmeta])* #[serde(rename = $tag)] #[cfg_attr($ts, ts(rename = $tag))] $variant,
        ] $($rest)*);
    };
    (@enum_def [$ts:meta] [$($head:tt)*] [$($done:tt)*]
        $(#[$vmeta:meta])* $variant:ident = $tag:literal { $($fields:tt)* } , $($rest:tt)*
    ) => {
        $crate::wire!(@fields [$ts]
            [@enum_variant [$ts] [$($head)*] [$($done)*
                $(#[$vmeta])* #[serde(rename = $tag)] #[cfg_attr($ts, ts(rename = $tag))] $variant
            ] [$($rest)*]]
            [] $($fields)*);
    };
    (@enum_variant [$ts:meta] [$($head:tt)*] [$($done:tt)*] [$($rest:tt)*] [$($fields:tt)*]) => {
        $crate::wire!(@enum_def [$ts] [$($head)*] [$($done)* { $($fields)* },] $($rest)*);
    };

    // ---- Writing one field into `$object`.
    (@put $object:ident $key:literal ($value:expr)) => {
        $object.field($key, $value);
    };
    (@put $object:ident $key:literal ($value:expr) default) => {
        $object.field($key, $value);
    };
    (@put $object:ident $key:literal ($value:expr) optional) => {
        if let ::core::option::Option::Some(value) = $value {
            $object.field($key, value);
        }
    };
    (@put $object:ident $key:literal ($value:expr) omit_empty) => {
        if !$value.is_empty() {
            $object.field($key, $value);
        }
    };

    // ---- A field's value once its object was read: `$slot` is `Some` when the key was present.
    (@take $slot:ident $key:literal) => {
        $crate::fields::required($slot, $key)?
    };
    (@take $slot:ident $key:literal $mode:ident) => {
        $slot.unwrap_or_default()
    };

    // ---- Reading a struct.
    (@struct_read [written] $($rest:tt)*) => {};
    (@struct_read [$policy:ident] $name:ident { $( $field:ident : $ty:ty = $key:literal $($mode:ident)? ),* }) => {
        impl $crate::fields::ReadObject for $name {
            const EXPECTING: &'static str = concat!("struct ", stringify!($name));

            fn read<'de, A: $crate::__private::serde::de::MapAccess<'de>>(
                mut map: A,
            ) -> ::core::result::Result<Self, A::Error> {
                #[allow(non_camel_case_types)]
                enum Field { $($field),* }
                const LAST: usize = [$($key),*].len() - 1;
                $( let mut $field: ::core::option::Option<$ty> = ::core::option::Option::None; )*
                $crate::fields::fields(&mut map, &[$($key),*], $crate::wire!(@lenient $policy), &mut |i, map| {
                    $( if i == Field::$field as usize || Field::$field as usize == LAST {
                        $field = ::core::option::Option::Some(
                            $crate::__private::serde::de::MapAccess::next_value(map)?,
                        );
                    } else )* {}
                    ::core::result::Result::Ok(())
                })?;
                ::core::result::Result::Ok($name { $( $field: $crate::wire!(@take $field $key $($mode)?), )* })
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                $crate::fields::object(deserializer)
            }
        }

        $crate::wire!(@mirror_fields [@struct_mirror [$policy] $name] [] $( $field : $ty = $key $($mode)? , )*);
    };
    // ---- serde's derive over the same declaration (objects only), for the equivalence tests.
    (@mirror_fields [$($then:tt)*] [$($done:tt)*]) => {
        $crate::wire!($($then)* [$($done)*]);
    };
    (@mirror_fields [$($then:tt)*] [$($done:tt)*] $field:ident : $ty:ty = $key:literal , $($rest:tt)*) => {
        $crate::wire!(@mirror_fields [$($then)*] [$($done)*
            #[serde(rename = $key, deserialize_with = "patchbridge_protocol::__private::present")]
            $field: $ty,
        ] $($rest)*);
    };
    (@mirror_fields [$($then:tt)*] [$($done:tt)*]
        $field:ident : $ty:ty = $key:literal $mode:ident , $($rest:tt)*
    ) => {
        $crate::wire!(@mirror_fields [$($then)*] [$($done)*
            #[serde(rename = $key, default)]
            $field: $ty,
        ] $($rest)*);
    };
    (@struct_mirror [strict] $name:ident [$($fields:tt)*]) => {
        $crate::wire!(@struct_mirror_impl $name [deny_unknown_fields] [$($fields)*]);
    };
    (@struct_mirror [lenient] $name:ident [$($fields:tt)*]) => {
        $crate::wire!(@struct_mirror_impl $name [] [$($fields)*]);
    };
    (@struct_mirror_impl $name:ident [$($deny:ident)?] [$($fields:tt)*]) => {
        impl $name {
            /// serde's derived `Deserialize` for this declaration (objects only): the reference
            /// `tests/fields_equivalence.rs` compares the generated reader with. Nothing else calls it.
            #[doc(hidden)]
            pub fn derived_reader<'de, D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                type Remote = $name;

                #[derive($crate::__private::serde::Deserialize)]
                #[serde(crate = "patchbridge_protocol::__private::serde", remote = "Remote" $(, $deny)?)]
                #[allow(dead_code)]
                struct Mirror { $($fields)* }

                struct Objects;

                impl<'de> $crate::__private::serde::de::Visitor<'de> for Objects {
                    type Value = Remote;

                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str(concat!("struct ", stringify!($name)))
                    }

                    fn visit_map<A: $crate::__private::serde::de::MapAccess<'de>>(
                        self,
                        map: A,
                    ) -> ::core::result::Result<Remote, A::Error> {
                        Mirror::deserialize($crate::__private::serde::de::value::MapAccessDeserializer::new(map))
                    }
                }

                $crate::__private::serde::Deserializer::deserialize_map(deserializer, Objects)
            }
        }
    };

    (@struct_extra [] $($rest:tt)*) => {};
    (@struct_extra [value] [$policy:ident] $name:ident { $( $field:ident : $ty:ty = $key:literal $($mode:ident)? ),* }) => {
        impl $crate::value::FromValue for $name {
            fn from_value<E: $crate::__private::serde::de::Error>(
                value: $crate::__private::Value,
            ) -> ::core::result::Result<Self, E> {
                #[allow(non_camel_case_types)]
                enum Field { $($field),* }
                const LAST: usize = [$($key),*].len() - 1;
                $( let mut $field: ::core::option::Option<$ty> = ::core::option::Option::None; )*
                let fields = $crate::value::object_value(value, concat!("struct ", stringify!($name)))?;
                $crate::value::walk(fields, &[$($key),*], $crate::wire!(@lenient $policy), &mut |i, value| {
                    $( if i == Field::$field as usize || Field::$field as usize == LAST {
                        $field = ::core::option::Option::Some($crate::value::FromValue::from_value(value)?);
                    } else )* {}
                    ::core::result::Result::Ok(())
                })?;
                ::core::result::Result::Ok($name { $( $field: $crate::wire!(@take $field $key $($mode)?), )* })
            }
        }
    };

    (@lenient strict) => { false };
    (@lenient lenient) => { true };

    // ---- Reading a tagged enum: the variant's fields from `(key, Value)` pairs.
    (@enum_read [written] $($rest:tt)*) => {};
    (@enum_read [$policy:ident] $name:ident { $( $variant:ident $({ $($fields:tt)* })? ),* }) => {
        impl $crate::tagged::FromTagged for $name {
            const EXPECTING: &'static str = concat!("internally tagged enum ", stringify!($name));
            const TAGS: &'static [&'static str] = $name::TAGS;

            fn from_tagged<E: $crate::__private::serde::de::Error>(
                variant: usize,
                fields: $crate::tagged::Fields,
            ) -> ::core::result::Result<Self, E> {
                #[allow(non_camel_case_types)]
                enum Variant { $($variant),* }
                const LAST: usize = [$(stringify!($variant)),*].len() - 1;
                // The last variant's test is constant-true, so no fallback is compiled.
                $( if variant == Variant::$variant as usize || Variant::$variant as usize == LAST {
                    return $crate::wire!(@variant [$policy] $name $variant fields $({ $($fields)* })?);
                } )*
                unreachable!()
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                $crate::tagged::tagged(deserializer)
            }
        }

        impl $crate::value::FromValue for $name {
            fn from_value<E: $crate::__private::serde::de::Error>(
                value: $crate::__private::Value,
            ) -> ::core::result::Result<Self, E> {
                $crate::tagged::tagged_value(value)
            }
        }
    };
    // A variant without fields ignores other keys (as serde's internally tagged unit variants do).
    (@variant [$policy:ident] $name:ident $variant:ident $fields:ident) => {
        ::core::result::Result::Ok($name::$variant)
    };
    (@variant [$policy:ident] $name:ident $variant:ident $fields:ident {
        $( $field:ident : $ty:ty = $key:literal $($mode:ident)? ),*
    }) => {{
        #[allow(non_camel_case_types)]
        enum Field { $($field),* }
        const LAST: usize = [$($key),*].len() - 1;
        $( let mut $field: ::core::option::Option<$ty> = ::core::option::Option::None; )*
        $crate::value::walk($fields, &[$($key),*], $crate::wire!(@lenient $policy), &mut |i, value| {
            $( if i == Field::$field as usize || Field::$field as usize == LAST {
                $field = ::core::option::Option::Some($crate::value::FromValue::from_value(value)?);
            } else )* {}
            ::core::result::Result::Ok(())
        })?;
        ::core::result::Result::Ok($name::$variant { $( $field: $crate::wire!(@take $field $key $($mode)?), )* })
    }};
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::ToValue;

    crate::wire! {
        strict;
        /// One field of each rule.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Sample {
            pub required: String = "required",
            pub nullable: Option<u64> = "nullableKey",
            pub optional: Option<String> = "optional" optional,
            pub default: u64 = "default" default,
            pub list: Vec<String> = "list" omit_empty,
        }
    }

    crate::wire! {
        lenient;
        /// A variant without fields and one with.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Shape {
            Dot = "dot",
            Line = "line" {
                length: u32 = "length",
                label: Option<String> = "label" optional,
            },
        }
    }

    fn read<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    #[test]
    fn each_field_rule_reads_and_writes_as_the_module_docs_say() {
        let least = read::<Sample>(json!({"required": "r", "nullableKey": null})).unwrap();
        assert_eq!(
            least,
            Sample {
                required: "r".into(),
                nullable: None,
                optional: None,
                default: 0,
                list: Vec::new(),
            }
        );
        // `optional` and an empty `omit_empty` are not written; a required `Option` and `default` always are.
        let written = json!({"required": "r", "nullableKey": null, "default": 0});
        assert_eq!(least.to_value(), written);
        assert_eq!(serde_json::to_value(&least).unwrap(), written);

        let most = json!({"required": "r", "nullableKey": 7, "optional": "o", "default": 3, "list": ["a"]});
        let sample = read::<Sample>(most.clone()).unwrap();
        assert_eq!(sample.to_value(), most);
        assert_eq!(serde_json::to_string(&sample).unwrap(), most.to_string());

        assert_eq!(
            read::<Sample>(json!({"required": "r"})).unwrap_err(),
            "missing field `nullableKey`"
        );
        assert_eq!(
            read::<Sample>(json!({"required": "r", "nullableKey": 1, "extra": 1})).unwrap_err(),
            "unknown field `extra`, expected one of `required`, `nullableKey`, `optional`, `default`, `list`"
        );
        assert_eq!(
            read::<Sample>(json!(["r", null])).unwrap_err(),
            "invalid type: sequence, expected struct Sample"
        );
        // The reference the equivalence tests use: serde's derive over the same declaration.
        for value in [
            most,
            json!({"required": "r"}),
            json!({"nullableKey": 1, "x": 1}),
        ] {
            let derived = Sample::derived_reader(value.clone()).map_err(|e| e.to_string());
            assert_eq!(
                format!("{derived:?}"),
                format!("{:?}", read::<Sample>(value))
            );
        }
    }

    #[test]
    fn a_tagged_enum_has_its_tags_and_reads_and_writes_its_variants() {
        assert_eq!(Shape::TAGS, ["dot", "line"]);
        // Lenient: unknown keys are skipped; a variant without fields ignores every other key.
        let dot = read::<Shape>(json!({"type": "dot", "length": 1})).unwrap();
        assert_eq!(
            (dot.type_name(), dot.to_value()),
            ("dot", json!({"type": "dot"}))
        );
        let line = read::<Shape>(json!({"length": 4, "type": "line", "newer": true})).unwrap();
        assert_eq!(
            line,
            Shape::Line {
                length: 4,
                label: None
            }
        );
        assert_eq!(line.to_value(), json!({"type": "line", "length": 4}));
        assert_eq!(
            serde_json::to_value(&line).unwrap(),
            json!({"type": "line", "length": 4})
        );
        assert_eq!(
            read::<Shape>(json!({"type": "line"})).unwrap_err(),
            "missing field `length`"
        );
        assert_eq!(
            read::<Shape>(json!({"type": "circle"})).unwrap_err(),
            "unknown variant `circle`, expected `dot` or `line`"
        );
    }
}
