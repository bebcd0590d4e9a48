//! [`string_enum!`](crate::string_enum): a closed set of stable strings declared once.
//!
//! Stable codes (the runtime's `AGENT_*` error codes, limit names, outcomes, statuses) are compared as strings
//! by JavaScript hosts and written into stored data, so each must appear exactly once in the source: the
//! variant list, `ALL`, `DOCS`, `as_str`, `parse`, `Display`, `Serialize`, `ToValue` and `Deserialize` are all
//! generated from one `Variant = "text"` list. A value added to the enum is therefore in `ALL` and parses back, without a second
//! place to forget (the npm package's TypeScript declarations of these sets are generated from `ALL`).

/// Declares a fieldless enum whose values are stable strings.
///
/// ```
/// patchbridge_protocol::string_enum! {
///     /// Traffic lights.
///     pub enum Light {
///         /// Stop.
///         Red = "red",
///         /// Go.
///         Green = "green",
///     }
/// }
/// assert_eq!(Light::ALL, [Light::Red, Light::Green]);
/// assert_eq!(Light::DOCS, [" Stop.\n", " Go.\n"]);
/// assert_eq!(Light::Green.as_str(), "green");
/// assert_eq!(Light::parse("red"), Some(Light::Red));
/// assert_eq!(Light::parse("amber"), None);
/// assert_eq!(serde_json::to_string(&Light::Red).unwrap(), "\"red\"");
/// assert_eq!(serde_json::from_str::<Light>("\"green\"").unwrap(), Light::Green);
/// ```
#[macro_export]
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[doc = $doc:literal])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[doc = $doc])* $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The doc comment of each value, in the order of `ALL` (its lines as written, each ending in `\n`;
            /// the npm package's declarations carry them).
            pub const DOCS: [&'static str; [$($text),+].len()] = [$(concat!($($doc, "\n"),*)),+];

            /// The stable string.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }

            /// The value whose stable string is exactly `text`.
            pub fn parse(text: &str) -> ::core::option::Option<$name> {
                match text {
                    $( $text => ::core::option::Option::Some($name::$variant), )+
                    _ => ::core::option::Option::None,
                }
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl $crate::write::ToValue for $name {
            fn to_value(&self) -> $crate::__private::Value {
                $crate::__private::Value::String(self.as_str().into())
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                let text =
                    <$crate::__private::String as $crate::__private::serde::Deserialize>::deserialize(
                        deserializer,
                    )?;
                $name::parse(&text).ok_or_else(|| {
                    <D::Error as $crate::__private::serde::de::Error>::unknown_variant(
                        &text,
                        &[$($text),+],
                    )
                })
            }
        }
    };
}
