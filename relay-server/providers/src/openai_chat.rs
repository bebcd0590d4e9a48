//! Placeholder (first API commit): every call fails clearly until the adapter lands.
use patchbridge_protocol::{ModelRequest, StreamEvent};
use crate::{AdapterError, ModelOptions, UpstreamRequest};

#[allow(dead_code)]
pub(crate) fn validate_options(_options: &ModelOptions) -> Result<(), AdapterError> { Ok(()) }

pub(crate) fn encode(_options: &ModelOptions, _request: &ModelRequest) -> Result<UpstreamRequest, AdapterError> {
    Err(AdapterError::InvalidRequest("openai_chat adapter not implemented yet".into()))
}

pub(crate) struct ChatDecoder;
impl ChatDecoder {
    pub(crate) fn new(_request: &ModelRequest) -> Result<Self, AdapterError> { Ok(ChatDecoder) }
    pub(crate) fn feed(&mut self, _event: &str, _data: &str, _out: &mut Vec<StreamEvent>) -> Result<(), AdapterError> {
        Err(AdapterError::UpstreamProtocol("openai_chat decoder not implemented yet".into()))
    }
    pub(crate) fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), AdapterError> {
        Err(AdapterError::UpstreamProtocol("openai_chat decoder not implemented yet".into()))
    }
    pub(crate) fn is_complete(&self) -> bool { false }
}
