//! The tool registry and the per-turn [`ToolRegistrySnapshot`].
//!
//! One mutable [`ToolRegistry`] (with a revision counter bumped on every change) and immutable snapshots that
//! freeze definitions *and* routing (handlers) for one turn: what the model was shown is exactly what the turn
//! may call, whatever is (un)registered meanwhile.

use std::rc::Rc;

use patchbridge_protocol::{ToValue, ToolDefinition};
use serde_json::{Map, Value};

use super::error::{AgentError, ErrorCode};
use super::host::{RegexEngine, ToolHandler};
use super::schema::Schema;

patchbridge_protocol::wire! {
    written;
    /// A tool's definition and confirmation policy.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ToolSpec {
        /// Unique name the model calls it by.
        pub name: String = "name",
        /// What the tool does (shown to the model).
        pub description: String = "description",
        /// JSON Schema of the arguments object.
        pub input_schema: Value = "inputSchema",
        /// Explicitly read-only tools run without confirmation (unless `require_confirmation`).
        pub read_only: bool = "readOnly",
        /// Always ask the user before running, even when read-only.
        pub require_confirmation: bool = "requireConfirmation",
        /// Check each call's arguments against `input_schema` before confirmation or execution (default `true`;
        /// `false` for tools that validate their arguments themselves).
        pub validate_input: bool = "validateInput",
    }
}

impl ToolSpec {
    /// Whether calling this tool raises a `tool-confirmation` interrupt: tools not explicitly read-only, and
    /// every tool with `requireConfirmation: true`.
    pub fn needs_confirmation(&self) -> bool {
        !self.read_only || self.require_confirmation
    }

    /// The definition sent to the model.
    pub fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
        }
    }

    /// Checks the name is non-empty (and at most 128 characters) and the schema is a JSON object.
    pub fn validate(&self) -> Result<(), AgentError> {
        if self.name.trim().is_empty() || self.name.chars().count() > 128 {
            return Err(AgentError::new(
                ErrorCode::InvalidTool,
                "tool name must be a non-empty string of at most 128 characters",
            ));
        }
        if !self.input_schema.is_object() {
            return Err(AgentError::new(
                ErrorCode::InvalidTool,
                format!("tool {:?}: inputSchema must be a JSON object", self.name),
            ));
        }
        Ok(())
    }

    /// The schema compiled for argument validation (`None` with `validate_input: false`), its patterns by the
    /// host's `regexes`; a schema that cannot be used fails with `AGENT_INVALID_TOOL` naming the tool, the
    /// keyword and where it is.
    pub fn compile_schema(&self, regexes: &dyn RegexEngine) -> Result<Option<Schema>, AgentError> {
        if !self.validate_input {
            return Ok(None);
        }
        Schema::compile(&self.input_schema, regexes).map(Some).map_err(|e| {
            // Built by hand: `json!` would serialise each field through a fallible path the refusal never needs.
            let mut details = Map::new();
            details.insert("tool".to_owned(), Value::String(self.name.clone()));
            details.insert("keyword".to_owned(), Value::String(e.keyword.to_owned()));
            details.insert("pointer".to_owned(), Value::String(e.pointer.clone()));
            AgentError::new(
                ErrorCode::InvalidTool,
                format!(
                    "tool {:?}: inputSchema cannot be used to check arguments: {} at {:?}: {} (validateInput: false skips the check)",
                    self.name, e.keyword, e.pointer, e.problem
                ),
            )
            .with_details(Value::Object(details))
        })
    }
}

/// A tool with its implementation.
#[derive(Clone)]
pub struct RegisteredTool {
    /// Definition and policy.
    pub spec: Rc<ToolSpec>,
    /// The implementation frozen with the definition.
    pub handler: Rc<dyn ToolHandler>,
    /// The compiled `inputSchema` its calls' arguments are checked against (`None`: not checked).
    pub schema: Option<Rc<Schema>>,
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

/// An immutable view of the registry at one revision, frozen for one turn.
#[derive(Debug, Clone, Default)]
pub struct ToolRegistrySnapshot {
    /// The registry revision this snapshot was taken at.
    pub revision: u64,
    /// Tools in registration order.
    pub tools: Vec<RegisteredTool>,
}

impl ToolRegistrySnapshot {
    /// Looks a tool up by name.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.iter().find(|t| t.spec.name == name)
    }

    /// The definitions sent to the model, in registration order.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.iter().map(|t| t.spec.definition()).collect()
    }

    /// The specs as JSON (for inspectors).
    pub fn specs_json(&self) -> Value {
        Value::Array(self.tools.iter().map(|t| t.spec.to_value()).collect())
    }
}

/// The one mutable registry. Every successful change bumps [`ToolRegistry::revision`].
pub struct ToolRegistry {
    revision: u64,
    tools: Vec<RegisteredTool>,
    cached: Option<Rc<ToolRegistrySnapshot>>,
    /// Compiles the patterns of registered schemas (the host's ECMAScript `RegExp`).
    regexes: Rc<dyn RegexEngine>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("revision", &self.revision)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl ToolRegistry {
    /// An empty registry at revision 0, compiling schema patterns with `regexes` (the platform, in a runtime).
    pub fn new(regexes: Rc<dyn RegexEngine>) -> Self {
        ToolRegistry {
            revision: 0,
            tools: Vec::new(),
            cached: None,
            regexes,
        }
    }

    /// The current revision.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Registers a tool. A duplicate name, an invalid spec or an `inputSchema` that cannot be used for argument
    /// validation fails with `AGENT_INVALID_TOOL` and changes nothing.
    pub fn register(
        &mut self,
        spec: ToolSpec,
        handler: Rc<dyn ToolHandler>,
    ) -> Result<u64, AgentError> {
        spec.validate()?;
        let schema = spec.compile_schema(&*self.regexes)?.map(Rc::new);
        if self.tools.iter().any(|t| t.spec.name == spec.name) {
            return Err(AgentError::new(
                ErrorCode::InvalidTool,
                format!(
                    "a tool named {:?} is already registered; unregister it first",
                    spec.name
                ),
            ));
        }
        self.tools.push(RegisteredTool {
            spec: Rc::new(spec),
            handler,
            schema,
        });
        self.bump();
        Ok(self.revision)
    }

    /// Removes a tool by name; returns whether it existed (the revision changes only if it did).
    pub fn unregister(&mut self, name: &str) -> bool {
        let before = self.tools.len();
        self.tools.retain(|t| t.spec.name != name);
        let removed = self.tools.len() != before;
        if removed {
            self.bump();
        }
        removed
    }

    /// The immutable snapshot of the current revision (shared while the revision is unchanged).
    pub fn snapshot(&mut self) -> Rc<ToolRegistrySnapshot> {
        if let Some(cached) = &self.cached {
            return cached.clone();
        }
        let snapshot = Rc::new(ToolRegistrySnapshot {
            revision: self.revision,
            tools: self.tools.clone(),
        });
        self.cached = Some(snapshot.clone());
        snapshot
    }

    fn bump(&mut self) {
        self.revision += 1;
        self.cached = None;
    }
}
