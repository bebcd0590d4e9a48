//! Hand-written `Deserialize` for the wire structs the browser runtime reads most ([`Message`], [`ModelState`],
//! [`ToolDefinition`], [`ConversationContext`], [`ConversationSummary`], [`ConversationSnapshot`],
//! [`ConversationPage`], [`ModelRequest`], and the error envelope [`ErrorEnvelope`], [`ErrorBody`],
//! [`SpendingLimit`]). serde's derive gives each struct its own field-identifier visitor, key loop and
//! missing-field checks, one instance per input format; here the key loop is one function per map access
//! ([`fields`], its setter a `dyn`), and each struct only says how to read each declared field.
//!
//! Values are still read from the input as it streams (`next_value::<T>()`, as the derive does), so what is
//! accepted and every error text, serde_json's line and column included, are the derive's:
//! - a non-object is "invalid type: …, expected struct Message" (objects only, as `object.rs` explains);
//! - keys are checked in document order, each failing at once: an unknown key is `unknown_field` with the
//!   declared list (or skipped, for the response types that ignore unknown keys), a repeated one
//!   `duplicate_field`, a value its own type error;
//! - then the missing required fields in declaration order; an absent `Option` is `None`, an absent
//!   `#[serde(default)]` field its default, and an absent `modelState` is `missing_field` (null is allowed, absent
//!   is not: a forgotten key must not silently clear provider state).
//!
//! `tests/fields_equivalence.rs` pins that against reference types that keep the derives.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use crate::conversation::{
    ConversationContext, ConversationPage, ConversationSnapshot, ConversationSummary,
};
use crate::error::{ErrorBody, ErrorEnvelope, SpendingLimit};
use crate::message::{Message, ModelState, ToolDefinition};
use crate::request::ModelRequest;

/// A struct read from a JSON object by [`fields`].
trait ReadObject: Sized {
    /// What a non-object is refused for ("struct Message").
    const EXPECTING: &'static str;
    fn read<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: ReadObject> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::read(map)
    }
}

macro_rules! from_objects {
    ($($ty:ident),+ $(,)?) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_map(ObjectVisitor::<$ty>(PhantomData))
            }
        }
    )+};
}

from_objects!(
    Message,
    ModelState,
    ToolDefinition,
    ConversationContext,
    ConversationSummary,
    ConversationSnapshot,
    ConversationPage,
    ModelRequest,
    ErrorEnvelope,
    ErrorBody,
    SpendingLimit,
);

/// A key: the index of a declared field, `None` for an unknown key when `lenient`, else `unknown_field`.
struct Key {
    names: &'static [&'static str],
    lenient: bool,
}

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Option<usize>, E> {
        match self.names.iter().position(|name| *name == key) {
            Some(i) => Ok(Some(i)),
            None if self.lenient => Ok(None),
            None => Err(E::unknown_field(key, self.names)),
        }
    }
}

/// What [`fields`] calls for declared field `i`: reads its value from the map access.
type Setter<'s, A, E> = dyn FnMut(usize, &mut A) -> Result<(), E> + 's;

/// Reads an object's keys in document order; `set(i, map)` reads (and type-checks) the value of declared field
/// `i`. An unknown key's value is skipped when `lenient`. The setter is a `dyn` so that the loop is compiled once
/// per map access, not once per struct.
fn fields<'de, A: MapAccess<'de>>(
    map: &mut A,
    names: &'static [&'static str],
    lenient: bool,
    set: &mut Setter<'_, A, A::Error>,
) -> Result<(), A::Error> {
    let mut seen = 0u32;
    while let Some(key) = map.next_key_seed(Key { names, lenient })? {
        let Some(i) = key else {
            map.next_value::<IgnoredAny>()?;
            continue;
        };
        if seen & (1 << i) != 0 {
            return Err(de::Error::duplicate_field(names[i]));
        }
        seen |= 1 << i;
        set(i, map)?;
    }
    Ok(())
}

fn required<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(name))
}

const STRICT: bool = false;
const LENIENT: bool = true;

impl ReadObject for Message {
    const EXPECTING: &'static str = "struct Message";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut id, mut role, mut blocks) = (None, None, None);
        fields(
            &mut map,
            &["id", "role", "blocks"],
            STRICT,
            &mut |i, map| {
                match i {
                    0 => id = Some(map.next_value()?),
                    1 => role = Some(map.next_value()?),
                    _ => blocks = Some(map.next_value()?),
                }
                Ok(())
            },
        )?;
        Ok(Message {
            id: required(id, "id")?,
            role: required(role, "role")?,
            blocks: required(blocks, "blocks")?,
        })
    }
}

impl ReadObject for ModelState {
    const EXPECTING: &'static str = "struct ModelState";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut format, mut data) = (None, None);
        fields(&mut map, &["format", "data"], STRICT, &mut |i, map| {
            match i {
                0 => format = Some(map.next_value()?),
                _ => data = Some(map.next_value()?),
            }
            Ok(())
        })?;
        Ok(ModelState {
            format: required(format, "format")?,
            data: required(data, "data")?,
        })
    }
}

impl ReadObject for ToolDefinition {
    const EXPECTING: &'static str = "struct ToolDefinition";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut name, mut description, mut input_schema) = (None, None, None);
        let names = &["name", "description", "inputSchema"];
        fields(&mut map, names, STRICT, &mut |i, map| {
            match i {
                0 => name = Some(map.next_value()?),
                1 => description = Some(map.next_value()?),
                _ => input_schema = Some(map.next_value()?),
            }
            Ok(())
        })?;
        Ok(ToolDefinition {
            name: required(name, "name")?,
            description: required(description, "description")?,
            input_schema: required(input_schema, "inputSchema")?,
        })
    }
}

impl ReadObject for ConversationContext {
    const EXPECTING: &'static str = "struct ConversationContext";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut messages, mut model_state) = (None, None);
        fields(
            &mut map,
            &["messages", "modelState"],
            STRICT,
            &mut |i, map| {
                match i {
                    0 => messages = Some(map.next_value()?),
                    _ => model_state = Some(map.next_value()?),
                }
                Ok(())
            },
        )?;
        Ok(ConversationContext {
            messages: required(messages, "messages")?,
            model_state: required(model_state, "modelState")?,
        })
    }
}

impl ReadObject for ConversationSummary {
    const EXPECTING: &'static str = "struct ConversationSummary";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut id, mut title, mut revision, mut created_at, mut updated_at) =
            (None, None, None, None, None);
        let names = &["id", "title", "revision", "createdAt", "updatedAt"];
        fields(&mut map, names, LENIENT, &mut |i, map| {
            match i {
                0 => id = Some(map.next_value()?),
                1 => title = Some(map.next_value()?),
                2 => revision = Some(map.next_value()?),
                3 => created_at = Some(map.next_value()?),
                _ => updated_at = Some(map.next_value()?),
            }
            Ok(())
        })?;
        Ok(ConversationSummary {
            id: required(id, "id")?,
            title: required(title, "title")?,
            revision: required(revision, "revision")?,
            created_at: required(created_at, "createdAt")?,
            updated_at: required(updated_at, "updatedAt")?,
        })
    }
}

impl ReadObject for ConversationSnapshot {
    const EXPECTING: &'static str = "struct ConversationSnapshot";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut conversation, mut context) = (None, None);
        fields(
            &mut map,
            &["conversation", "context"],
            LENIENT,
            &mut |i, map| {
                match i {
                    0 => conversation = Some(map.next_value()?),
                    _ => context = Some(map.next_value()?),
                }
                Ok(())
            },
        )?;
        Ok(ConversationSnapshot {
            conversation: required(conversation, "conversation")?,
            context: required(context, "context")?,
        })
    }
}

impl ReadObject for ConversationPage {
    const EXPECTING: &'static str = "struct ConversationPage";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut items, mut next_cursor) = (None, None);
        fields(
            &mut map,
            &["items", "nextCursor"],
            LENIENT,
            &mut |i, map| {
                match i {
                    0 => items = Some(map.next_value()?),
                    _ => next_cursor = Some(map.next_value()?),
                }
                Ok(())
            },
        )?;
        Ok(ConversationPage {
            items: required(items, "items")?,
            next_cursor: next_cursor.unwrap_or_default(),
        })
    }
}

impl ReadObject for ModelRequest {
    const EXPECTING: &'static str = "struct ModelRequest";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut model, mut messages, mut model_state, mut tools, mut conversation_id) =
            (None, None, None, None, None);
        let names = &["model", "messages", "modelState", "tools", "conversationId"];
        fields(&mut map, names, STRICT, &mut |i, map| {
            match i {
                0 => model = Some(map.next_value()?),
                1 => messages = Some(map.next_value()?),
                2 => model_state = Some(map.next_value()?),
                3 => tools = Some(map.next_value()?),
                _ => conversation_id = Some(map.next_value()?),
            }
            Ok(())
        })?;
        Ok(ModelRequest {
            model: model.unwrap_or_default(),
            messages: required(messages, "messages")?,
            model_state: required(model_state, "modelState")?,
            tools: tools.unwrap_or_default(),
            conversation_id: conversation_id.unwrap_or_default(),
        })
    }
}

impl ReadObject for ErrorEnvelope {
    const EXPECTING: &'static str = "struct ErrorEnvelope";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut error = None;
        fields(&mut map, &["error"], LENIENT, &mut |_, map| {
            error = Some(map.next_value()?);
            Ok(())
        })?;
        Ok(ErrorEnvelope {
            error: required(error, "error")?,
        })
    }
}

impl ReadObject for ErrorBody {
    const EXPECTING: &'static str = "struct ErrorBody";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut code, mut message, mut current_revision, mut message_id) =
            (None, None, None, None);
        let (mut retryable, mut limit, mut retry_after_seconds) = (None, None, None);
        let names = &[
            "code",
            "message",
            "currentRevision",
            "messageId",
            "retryable",
            "limit",
            "retryAfterSeconds",
        ];
        fields(&mut map, names, LENIENT, &mut |i, map| {
            match i {
                0 => code = Some(map.next_value()?),
                1 => message = Some(map.next_value()?),
                2 => current_revision = Some(map.next_value()?),
                3 => message_id = Some(map.next_value()?),
                4 => retryable = Some(map.next_value()?),
                5 => limit = Some(map.next_value()?),
                _ => retry_after_seconds = Some(map.next_value()?),
            }
            Ok(())
        })?;
        Ok(ErrorBody {
            code: required(code, "code")?,
            message: message.unwrap_or_default(),
            current_revision: current_revision.unwrap_or_default(),
            message_id: message_id.unwrap_or_default(),
            retryable: retryable.unwrap_or_default(),
            limit: limit.unwrap_or_default(),
            retry_after_seconds: retry_after_seconds.unwrap_or_default(),
        })
    }
}

impl ReadObject for SpendingLimit {
    const EXPECTING: &'static str = "struct SpendingLimit";
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut kind, mut max, mut window_seconds, mut sliding, mut model) =
            (None, None, None, None, None);
        let names = &["kind", "max", "windowSeconds", "sliding", "model"];
        fields(&mut map, names, LENIENT, &mut |i, map| {
            match i {
                0 => kind = Some(map.next_value()?),
                1 => max = Some(map.next_value()?),
                2 => window_seconds = Some(map.next_value()?),
                3 => sliding = Some(map.next_value()?),
                _ => model = Some(map.next_value()?),
            }
            Ok(())
        })?;
        Ok(SpendingLimit {
            kind: required(kind, "kind")?,
            max: required(max, "max")?,
            window_seconds: window_seconds.unwrap_or_default(),
            sliding: sliding.unwrap_or_default(),
            model: model.unwrap_or_default(),
        })
    }
}
