from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.resource_list_response_type import (
    ResourceListResponseType,
    check_resource_list_response_type,
)

if TYPE_CHECKING:
    from ..models.mcp_resource import McpResource
    from ..models.skipped_server import SkippedServer


T = TypeVar("T", bound="ResourceListResponse")


@_attrs_define
class ResourceListResponse:
    """mcp/resource/list/resp.

    Attributes:
        type_ (ResourceListResponseType): The A2E message type. Default: 'mcp/resource/list/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        resources (list[McpResource]):
        next_cursor (str):  Default: ''.
        skipped_servers (list[SkippedServer]): Servers left out of this page (beyond the seed): see `SkippedServer`.
    """

    id: str
    ts: float
    resources: list[McpResource]
    skipped_servers: list[SkippedServer]
    type_: ResourceListResponseType = "mcp/resource/list/resp"
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

        resources = []
        for resources_item_data in self.resources:
            resources_item = resources_item_data.to_dict()
            resources.append(resources_item)

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
                "resources": resources,
                "next_cursor": next_cursor,
                "skipped_servers": skipped_servers,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_resource import McpResource
        from ..models.skipped_server import SkippedServer

        d = dict(src_dict)
        type_ = check_resource_list_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        resources = []
        _resources = d.pop("resources")
        for resources_item_data in _resources:
            resources_item = McpResource.from_dict(resources_item_data)

            resources.append(resources_item)

        next_cursor = d.pop("next_cursor")

        skipped_servers = []
        _skipped_servers = d.pop("skipped_servers")
        for skipped_servers_item_data in _skipped_servers:
            skipped_servers_item = SkippedServer.from_dict(skipped_servers_item_data)

            skipped_servers.append(skipped_servers_item)

        resource_list_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            resources=resources,
            next_cursor=next_cursor,
            skipped_servers=skipped_servers,
        )

        resource_list_response.additional_properties = d
        return resource_list_response

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
