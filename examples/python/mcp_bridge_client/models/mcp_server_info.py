from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.mcp_server_status import McpServerStatus, check_mcp_server_status
from ..models.mcp_transport import McpTransport, check_mcp_transport
from ..types import UNSET, Unset

T = TypeVar("T", bound="McpServerInfo")


@_attrs_define
class McpServerInfo:
    """MCPServerInfo: a registered server as it is now.

    Attributes:
        server_id (str):  Default: ''.
        name (str):  Default: ''.
        transport (McpTransport): How mcp-bridge reaches an MCP server.
        status (McpServerStatus): Connection state of a registered server.
        mcp_version (str): MCP protocol version negotiated with the server. Default: ''.
        server_name (str): The server software's own name. Default: ''.
        server_version (str):  Default: ''.
        tools_count (int): Tools exposed in the catalogue (after the allow list). Default: 0.
        resources_count (int):  Default: 0.
        prompts_count (int):  Default: 0.
        last_ping_ms (float): Latency of the last ping, milliseconds. Default: 0.0.
        error (str): Last error, empty when none. Default: ''.
        connected_at (float): When the current connection was established (seconds since the epoch), 0 when none.
            Default: 0.0.
        replica (None | str | Unset): Across replicas: the replica that holds the server's connection (absent on a
            single
            replica, empty while none holds it).
    """

    transport: McpTransport
    status: McpServerStatus
    server_id: str = ""
    name: str = ""
    mcp_version: str = ""
    server_name: str = ""
    server_version: str = ""
    tools_count: int = 0
    resources_count: int = 0
    prompts_count: int = 0
    last_ping_ms: float = 0.0
    error: str = ""
    connected_at: float = 0.0
    replica: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        server_id = self.server_id

        name = self.name

        transport: str = self.transport

        status: str = self.status

        mcp_version = self.mcp_version

        server_name = self.server_name

        server_version = self.server_version

        tools_count = self.tools_count

        resources_count = self.resources_count

        prompts_count = self.prompts_count

        last_ping_ms = self.last_ping_ms

        error = self.error

        connected_at = self.connected_at

        replica: None | str | Unset
        if isinstance(self.replica, Unset):
            replica = UNSET
        else:
            replica = self.replica

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "server_id": server_id,
                "name": name,
                "transport": transport,
                "status": status,
                "mcp_version": mcp_version,
                "server_name": server_name,
                "server_version": server_version,
                "tools_count": tools_count,
                "resources_count": resources_count,
                "prompts_count": prompts_count,
                "last_ping_ms": last_ping_ms,
                "error": error,
                "connected_at": connected_at,
            }
        )
        if replica is not UNSET:
            field_dict["replica"] = replica

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        server_id = d.pop("server_id")

        name = d.pop("name")

        transport = check_mcp_transport(d.pop("transport"))

        status = check_mcp_server_status(d.pop("status"))

        mcp_version = d.pop("mcp_version")

        server_name = d.pop("server_name")

        server_version = d.pop("server_version")

        tools_count = d.pop("tools_count")

        resources_count = d.pop("resources_count")

        prompts_count = d.pop("prompts_count")

        last_ping_ms = d.pop("last_ping_ms")

        error = d.pop("error")

        connected_at = d.pop("connected_at")

        def _parse_replica(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        replica = _parse_replica(d.pop("replica", UNSET))

        mcp_server_info = cls(
            server_id=server_id,
            name=name,
            transport=transport,
            status=status,
            mcp_version=mcp_version,
            server_name=server_name,
            server_version=server_version,
            tools_count=tools_count,
            resources_count=resources_count,
            prompts_count=prompts_count,
            last_ping_ms=last_ping_ms,
            error=error,
            connected_at=connected_at,
            replica=replica,
        )

        mcp_server_info.additional_properties = d
        return mcp_server_info

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
