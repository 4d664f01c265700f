from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.resource_templates_response_type import (
    ResourceTemplatesResponseType,
    check_resource_templates_response_type,
)

if TYPE_CHECKING:
    from ..models.mcp_resource_template import McpResourceTemplate
    from ..models.skipped_server import SkippedServer


T = TypeVar("T", bound="ResourceTemplatesResponse")


@_attrs_define
class ResourceTemplatesResponse:
    """mcp/resource/templates/resp.

    Attributes:
        type_ (ResourceTemplatesResponseType): The A2E message type. Default: 'mcp/resource/templates/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        resource_templates (list[McpResourceTemplate]):
        next_cursor (str):  Default: ''.
        skipped_servers (list[SkippedServer]): Servers left out of this page (beyond the seed): see `SkippedServer`.
    """

    id: str
    ts: float
    resource_templates: list[McpResourceTemplate]
    skipped_servers: list[SkippedServer]
    type_: ResourceTemplatesResponseType = "mcp/resource/templates/resp"
    version: str = "1.0"
    req_id: str = ""
    next_cursor: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        resource_templates = []
        for resource_templates_item_data in self.resource_templates:
            resource_templates_item = resource_templates_item_data.to_dict()
            resource_templates.append(resource_templates_item)

        next_cursor = self.next_cursor

        skipped_servers = []
        for skipped_servers_item_data in self.skipped_servers:
            skipped_servers_item = skipped_servers_item_data.to_dict()
            skipped_servers.append(skipped_servers_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "resource_templates": resource_templates,
                "next_cursor": next_cursor,
                "skipped_servers": skipped_servers,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_resource_template import McpResourceTemplate
        from ..models.skipped_server import SkippedServer

        d = dict(src_dict)
        type_ = check_resource_templates_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        resource_templates = []
        _resource_templates = d.pop("resource_templates")
        for resource_templates_item_data in _resource_templates:
            resource_templates_item = McpResourceTemplate.from_dict(
                resource_templates_item_data
            )

            resource_templates.append(resource_templates_item)

        next_cursor = d.pop("next_cursor")

        skipped_servers = []
        _skipped_servers = d.pop("skipped_servers")
        for skipped_servers_item_data in _skipped_servers:
            skipped_servers_item = SkippedServer.from_dict(skipped_servers_item_data)

            skipped_servers.append(skipped_servers_item)

        resource_templates_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            resource_templates=resource_templates,
            next_cursor=next_cursor,
            skipped_servers=skipped_servers,
        )

        resource_templates_response.additional_properties = d
        return resource_templates_response

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
