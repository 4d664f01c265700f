//! MCP Apps as callers see them: a tool's user interface is taken away when the caller may not
//! read its `ui://` resource, app-only tools are kept from models, and a call that comes from an
//! app is held to the extension's host rules (the tool must be visible to apps; an app-only tool
//! only to its own server's apps).

use serde_json::Value;

use super::{Scope, Tools};
use crate::a2e::{ToolCallRequest, ToolInfo};
use crate::access::toolsets::Item;
use crate::access::{Kind, View};
use crate::registry::{self, apps, naming};

/// Where a tool call comes from, as far as the bridge can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via<'a> {
    /// A model (REST without `app`, the meta-tools): app-only tools are refused.
    Model,
    /// An MCP host on `/mcp` that did not say: the extension gives the host the duty of keeping
    /// app-only tools from its model and its apps apart, so the call goes through.
    Host,
    /// The app shown from this `ui://` resource (as the bridge lists it).
    App(&'a str),
}

/// The `_meta` key of a `tools/call` on `/mcp` that names the app the call comes from, by its
/// `ui://{server_id}/…` URI: the extension leaves it to the host to know, and a host that
/// proxies an app's call through the bridge can say it here.
pub const APP_META: &str = "mcp-bridge/app";

/// The app a `tools/call`'s `_meta` names ([`APP_META`]).
pub fn app_of(meta: Option<&serde_json::Map<String, Value>>) -> Option<String> {
    meta?.get(APP_META)?.as_str().map(str::to_owned)
}

/// Whether only apps may use the tool (its `_meta.ui.visibility` leaves out `"model"`).
pub fn app_only(info: &ToolInfo) -> bool {
    apps::visibility(info.meta.as_ref().and_then(Value::as_object)).app_only()
}

impl Tools {
    /// `info` as `view` may see it: without its user interface (`ui.resourceUri` and
    /// `ui/resourceUri`) when the caller may not read that `ui://` resource.
    pub fn fit_info(&self, view: &View, info: &mut ToolInfo) {
        if let Some(meta) = info.meta.as_mut().and_then(Value::as_object_mut)
            && self.hides_interface(view, meta)
        {
            apps::strip_resource_uri(meta);
        }
    }

    /// [`Tools::fit_info`] for a scope's member, its `/mcp` definition too.
    pub(super) fn fit_item(&self, view: &View, item: &mut Item) {
        self.fit_info(view, &mut item.info);
        if let Some(meta) = item.definition.meta.as_mut()
            && self.hides_interface(view, &meta.0)
        {
            apps::strip_resource_uri(&mut meta.0);
        }
    }

    fn hides_interface(&self, view: &View, meta: &serde_json::Map<String, Value>) -> bool {
        !view.sees_everything()
            && apps::resource_uris(meta)
                .iter()
                .any(|(server_id, uri)| !self.shows_item(view, Kind::Resource, server_id, uri))
    }

    /// Refuses a call of the member of `scope` shown as `name` that `via` may not make. An
    /// unknown name is let through, to be answered as unknown.
    pub fn check_app_call(
        &self,
        scope: Scope<'_>,
        name: &str,
        via: Via<'_>,
    ) -> Result<(), registry::Error> {
        if via == Via::Host {
            return Ok(());
        }
        let app = match via {
            Via::App(uri) => Some(naming::split_ui(uri).filter(|(id, _)| self.registry.get(id).is_ok())
                .map(|(id, _)| id.to_owned())
                .ok_or_else(|| {
                    registry::Error::Invalid(format!(
                        "`app` \"{uri}\" is not the `ui://{{server_id}}/…` URI of an app the bridge lists"
                    ))
                })?),
            _ => None,
        };
        // Looked up in place: this runs on every REST call, and a member holds its schemas.
        let inner = match scope {
            Scope::Deferred => Scope::Catalogue,
            other => other,
        };
        let Ok(members) = self.members(inner) else {
            return Ok(());
        };
        let found = members.get(name);
        let Some(item) = found.or_else(|| members.items.iter().find(|item| item.full == name))
        else {
            return Ok(());
        };
        let meta = item.info.meta.as_ref().and_then(Value::as_object);
        let visibility = apps::visibility(meta);
        let refuse =
            |why: String| Err(registry::Error::Forbidden(format!("tool \"{name}\" {why}")));
        match app {
            None if visibility.app_only() => refuse(
                "is app-only (its `_meta.ui.visibility` leaves out \"model\"): only an app of its \
                 own server may call it; name that app with `app`"
                    .into(),
            ),
            Some(_) if !visibility.app => refuse(
                "is not visible to apps (its `_meta.ui.visibility` leaves out \"app\")".into(),
            ),
            Some(app) if visibility.app_only() && app != item.info.server_id => refuse(format!(
                "is app-only and belongs to server \"{}\": an app of server \"{app}\" may not call it",
                item.info.server_id
            )),
            _ => Ok(()),
        }
    }

    /// [`Tools::check_app_call`] for a REST or A2E `tool/call/req`: its `app`, or a model
    /// when it names none.
    pub fn check_call_request(&self, req: &ToolCallRequest) -> Result<(), registry::Error> {
        let via = match req.app.as_str() {
            "" => Via::Model,
            app => Via::App(app),
        };
        self.check_app_call(Scope::of(&req.toolset), &req.name, via)
    }
}
