from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.server_import_request_type import (
    ServerImportRequestType,
    check_server_import_request_type,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.server_import_request_mcp_servers import ServerImportRequestMcpServers
    from ..models.server_import_request_servers import ServerImportRequestServers


T = TypeVar("T", bound="ServerImportRequest")


@_attrs_define
class ServerImportRequest:
    """mcp/server/import/req: the server list of a Claude Desktop / Claude Code / Cursor / Cline
    (`mcpServers`) or VS Code (`servers`) configuration, as it is in that file.

        Attributes:
            type_ (ServerImportRequestType | Unset): The A2E message type. Default: 'mcp/server/import/req'.
            id (str | Unset): Message id; a UUID when absent.
            version (str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
            ts (float | Unset): Timestamp, seconds since the Unix epoch; now when absent.
            mcp_servers (ServerImportRequestMcpServers | Unset):
            servers (ServerImportRequestServers | Unset):
            replace (bool | Unset): Replace a server already registered under the same id with a different config (the
                owner's or an admin's). Without it such an entry fails with `code: conflict` and
                nothing stored changes. Default: False.
    """

    type_: ServerImportRequestType | Unset = "mcp/server/import/req"
    id: str | Unset = UNSET
    version: str | Unset = "1.0"
    ts: float | Unset = UNSET
    mcp_servers: ServerImportRequestMcpServers | Unset = UNSET
    servers: ServerImportRequestServers | Unset = UNSET
    replace: bool | Unset = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        mcp_servers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.mcp_servers, Unset):
            mcp_servers = self.mcp_servers.to_dict()

        servers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.servers, Unset):
            servers = self.servers.to_dict()

        replace = self.replace

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if type_ is not UNSET:
            field_dict["type"] = type_
        if id is not UNSET:
            field_dict["id"] = id
        if version is not UNSET:
            field_dict["version"] = version
        if ts is not UNSET:
            field_dict["ts"] = ts
        if mcp_servers is not UNSET:
            field_dict["mcpServers"] = mcp_servers
        if servers is not UNSET:
            field_dict["servers"] = servers
        if replace is not UNSET:
            field_dict["replace"] = replace

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.server_import_request_mcp_servers import (
            ServerImportRequestMcpServers,
        )
        from ..models.server_import_request_servers import ServerImportRequestServers

        d = dict(src_dict)
        _type_ = d.pop("type", UNSET)
        type_: ServerImportRequestType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = check_server_import_request_type(_type_)

        id = d.pop("id", UNSET)

        version = d.pop("version", UNSET)

        ts = d.pop("ts", UNSET)

        _mcp_servers = d.pop("mcpServers", UNSET)
        mcp_servers: ServerImportRequestMcpServers | Unset
        if isinstance(_mcp_servers, Unset):
            mcp_servers = UNSET
        else:
            mcp_servers = ServerImportRequestMcpServers.from_dict(_mcp_servers)

        _servers = d.pop("servers", UNSET)
        servers: ServerImportRequestServers | Unset
        if isinstance(_servers, Unset):
            servers = UNSET
        else:
            servers = ServerImportRequestServers.from_dict(_servers)

        replace = d.pop("replace", UNSET)

        server_import_request = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            mcp_servers=mcp_servers,
            servers=servers,
            replace=replace,
        )

        server_import_request.additional_properties = d
        return server_import_request

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
