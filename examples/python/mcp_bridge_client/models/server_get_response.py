from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.server_get_response_type import (
    ServerGetResponseType,
    check_server_get_response_type,
)

if TYPE_CHECKING:
    from ..models.mcp_server_config import McpServerConfig
    from ..models.mcp_server_info import McpServerInfo


T = TypeVar("T", bound="ServerGetResponse")


@_attrs_define
class ServerGetResponse:
    """mcp/server/get/resp.

    Attributes:
        type_ (ServerGetResponseType): The A2E message type. Default: 'mcp/server/get/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        server (McpServerInfo): MCPServerInfo: a registered server as it is now.
        config (McpServerConfig): MCPServerConfig: how to reach one MCP server and what of it to expose.
    """

    id: str
    ts: float
    server: McpServerInfo
    config: McpServerConfig
    type_: ServerGetResponseType = "mcp/server/get/resp"
    version: str = "1.0"
    req_id: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        server = self.server.to_dict()

        config = self.config.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "server": server,
                "config": config,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_server_config import McpServerConfig
        from ..models.mcp_server_info import McpServerInfo

        d = dict(src_dict)
        type_ = check_server_get_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        server = McpServerInfo.from_dict(d.pop("server"))

        config = McpServerConfig.from_dict(d.pop("config"))

        server_get_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            server=server,
            config=config,
        )

        server_get_response.additional_properties = d
        return server_get_response

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
