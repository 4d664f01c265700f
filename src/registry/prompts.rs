//! Prompts across servers (merged pages, rendering by name) and completions of prompt and
//! resource-template arguments. A name offered by several servers needs a `server_id`.

use super::relay::Relayed;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompleteResult, CompletionContext, GetPromptRequestParams,
    GetPromptResult, Prompt, Reference,
};
use serde_json::{Map, Value};

use super::merge::{self, Cursor};
use super::resources::template_allowed;
use super::{Error, Registry, ServerEntry, naming};
use crate::a2e::{CompletionArgument, McpPrompt, McpPromptArgument, McpPromptMessage, Role};
use crate::upstream::{CallError, Connection};

impl Registry {
    /// A page of prompts as the servers listed them, each with its server's id.
    pub async fn prompts_page(
        &self,
        agent: &str,
        server_id: &str,
        cursor: &str,
    ) -> Result<merge::MergedPage<Prompt>, Error> {
        let sources = self
            .sources(agent, server_id, |c| c.prompts.is_some(), "prompts")
            .await?;
        merge::page(
            &sources,
            Cursor::decode(cursor)?,
            self.page_spec(server_id),
            merge::Readers {
                here: |conn: Arc<Connection>, cursor, timeout| async move {
                    conn.list_prompts(cursor, timeout)
                        .await
                        .map(|r| (r.prompts, r.next_cursor))
                },
                remote: |holder: String, server_id, cursor, timeout| async move {
                    self.forward_list(&holder, merge::Listing::Prompts, server_id, cursor, timeout)
                        .await
                },
                keep: |_: &ServerEntry, _: &Prompt| true,
            },
        )
        .await
    }

    /// Renders a prompt; answers its server and the result.
    pub async fn get_prompt(
        &self,
        agent: &str,
        server_id: &str,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<(String, GetPromptResult), Error> {
        self.get_prompt_for(agent, server_id, name, arguments, None)
            .await
    }

    /// The id of the server a get of prompt `name` goes to, for what must know it before the
    /// get (the interceptors).
    pub fn prompt_server(&self, server_id: &str, name: &str) -> Result<String, Error> {
        let offers = |_: &super::ServerEntry, lists: &crate::upstream::Lists| {
            lists.prompts.iter().any(|p| p.name == name)
        };
        let entry = self.route(server_id, offers, Error::PromptNotFound(name.to_owned()))?;
        Ok(entry.id.clone())
    }

    /// `get_prompt` for a 2026-07-28 `/mcp` client that answers its server's input requests
    /// itself (`rounds`, see hub::InputRounds). A prompt whose server is held by another
    /// replica is rendered there, as for any caller (its input requests answered as today's).
    pub async fn get_prompt_for(
        &self,
        agent: &str,
        server_id: &str,
        name: &str,
        arguments: Map<String, Value>,
        rounds: Option<&crate::hub::InputRounds>,
    ) -> Result<(String, GetPromptResult), Error> {
        if name.is_empty() {
            return Err(Error::Invalid("`name` is required".into()));
        }
        let offers = |_: &super::ServerEntry, lists: &crate::upstream::Lists| {
            lists.prompts.iter().any(|p| p.name == name)
        };
        let entry = self.route(server_id, offers, Error::PromptNotFound(name.to_owned()))?;
        self.settle(&entry).await;
        if let Some(holder) = entry.held_elsewhere() {
            let op = super::replicas::Op::GetPrompt {
                agent: agent.to_owned(),
                server_id: entry.id.clone(),
                name: name.to_owned(),
                arguments: arguments.clone(),
            };
            match self.relay_safe(&entry, holder, op).await {
                Relayed::Done(answer) => return answer,
                Relayed::HereNow => {}
            }
        }
        let conn = entry
            .ready_for(agent, |c| c.prompts.is_some(), "prompts")
            .await?;
        let lists = entry.lists();
        let prompt = lists
            .prompts
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| Error::PromptNotFound(name.to_owned()))?;
        let missing: Vec<&str> = prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(Error::Invalid(format!(
                "prompt \"{name}\" needs the argument(s) {}",
                missing.join(", ")
            )));
        }
        // MCP prompt arguments are strings: anything else is passed as its JSON text.
        let arguments: Map<String, Value> = arguments
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(_) => (k, v),
                other => (k, Value::String(other.to_string())),
            })
            .collect();
        let params = GetPromptRequestParams::new(name).with_arguments(arguments);
        let timeout = Duration::from_secs(entry.config().timeout);
        let result = conn
            .get_prompt(params, timeout, rounds)
            .await
            .map_err(|error| Error::Upstream {
                what: format!("rendering prompt \"{name}\""),
                error,
            })?;
        Ok((entry.id.clone(), result))
    }

    /// The server and upstream name a prompt is asked for by: as named, or, when no server
    /// offers that name and it reads `{server_id}__{prompt}` (as tools are named, and prompts on
    /// `/mcp`), split there. A `server_id` given beside a prefixed name must be the same.
    ///
    /// Only `Tools::resolve_item` calls it, before the caller's policies are applied: the methods
    /// here take the canonical (server, name) it gives and never unwrap a name again, so a
    /// policy always judges the prompt that is rendered.
    pub fn prompt_address<'a>(&'a self, server_id: &'a str, name: &'a str) -> (&'a str, &'a str) {
        let offers = |id: &str, name: &str| {
            self.get(id)
                .is_ok_and(|e| e.lists().prompts.iter().any(|p| p.name == name))
        };
        let as_named = (server_id, name);
        let Some((id, prompt)) = naming::split(name) else {
            return as_named;
        };
        if !(server_id.is_empty() || server_id == id) || !offers(id, prompt) {
            return as_named;
        }
        // Both readings are possible: a name some server offers as it is stays that name.
        let offered_as_named = match server_id {
            "" => self
                .entries()
                .iter()
                .any(|e| e.lists().prompts.iter().any(|p| p.name == name)),
            id => offers(id, name),
        };
        if offered_as_named {
            as_named
        } else {
            (id, prompt)
        }
    }

    /// Completes an argument of a prompt or a resource template.
    pub async fn complete(
        &self,
        agent: &str,
        server_id: &str,
        reference: Value,
        argument: CompletionArgument,
        context: Option<crate::a2e::CompletionContext>,
    ) -> Result<(String, CompleteResult), Error> {
        let reference: Reference = serde_json::from_value(reference).map_err(|e| {
            Error::Invalid(format!(
                "`ref` must be {{\"type\": \"ref/prompt\", \"name\": …}} or {{\"type\": \"ref/resource\", \"uri\": …}}: {e}"
            ))
        })?;
        if argument.name.is_empty() {
            return Err(Error::Invalid("`argument.name` is required".into()));
        }
        let entry = match &reference {
            Reference::Prompt(p) => self.route(
                server_id,
                |_, lists| lists.prompts.iter().any(|x| x.name == p.name),
                Error::PromptNotFound(p.name.clone()),
            )?,
            Reference::Resource(r) => self.route(
                server_id,
                |entry, lists| {
                    lists.templates.iter().any(|t| t.uri_template == r.uri)
                        && template_allowed(&entry.config().resource_allow_list, &r.uri)
                },
                Error::ResourceNotFound(r.uri.clone()),
            )?,
            _ => {
                return Err(Error::Invalid(
                    "`ref` must be a ref/prompt or a ref/resource".into(),
                ));
            }
        };
        if let Some(holder) = entry.held_elsewhere() {
            let op = super::replicas::Op::Complete {
                agent: agent.to_owned(),
                server_id: entry.id.clone(),
                reference: serde_json::to_value(&reference)
                    .map_err(|e| Error::Internal(e.to_string()))?,
                argument: argument.clone(),
                context: context.clone(),
            };
            match self.relay_safe(&entry, holder, op).await {
                Relayed::Done(answer) => return answer,
                Relayed::HereNow => {}
            }
        }
        let conn = entry
            .ready_for(agent, |c| c.completions.is_some(), "completions")
            .await?;
        // A named server skips `route`'s search: its template must still be listed and allowed,
        // or it is missing (a disallowed template is indistinguishable from a missing one).
        if let Reference::Resource(r) = &reference
            && (!template_allowed(&entry.config().resource_allow_list, &r.uri)
                || !entry
                    .lists()
                    .templates
                    .iter()
                    .any(|t| t.uri_template == r.uri))
        {
            return Err(Error::ResourceNotFound(r.uri.clone()));
        }
        let mut params =
            CompleteRequestParams::new(reference, ArgumentInfo::new(argument.name, argument.value));
        if let Some(context) = context {
            params.context = Some(CompletionContext::with_arguments(
                context.arguments.into_iter().collect(),
            ));
        }
        let timeout = Duration::from_secs(entry.config().timeout);
        let result = conn
            .complete(params, timeout)
            .await
            .map_err(|error| match error {
                CallError::Rejected { code: -32601, .. } => Error::CapabilityMissing {
                    server_id: entry.id.clone(),
                    what: "completions",
                },
                error => Error::Upstream {
                    what: "completing".into(),
                    error,
                },
            })?;
        Ok((entry.id.clone(), result))
    }
}

/// A listed prompt as an A2E MCPPrompt.
pub fn prompt_model(server_id: String, p: Prompt) -> McpPrompt {
    McpPrompt {
        name: p.name,
        description: p.description.unwrap_or_default(),
        server_id,
        arguments: p
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|a| McpPromptArgument {
                name: a.name,
                description: a.description.unwrap_or_default(),
                required: a.required.unwrap_or(false),
            })
            .collect(),
    }
}

/// Each rendered message as an A2E MCPPromptMessage: its role and its MCP content block.
pub fn prompt_messages(result: &GetPromptResult) -> Vec<McpPromptMessage> {
    result
        .messages
        .iter()
        .map(|m| McpPromptMessage {
            role: match m.role {
                rmcp::model::Role::User => Role::User,
                rmcp::model::Role::Assistant => Role::Assistant,
            },
            content: serde_json::to_value(&m.content).unwrap_or_default(),
        })
        .collect()
}
