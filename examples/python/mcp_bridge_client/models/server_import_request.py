from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.server_import_request_type_type_1 import (
    ServerImportRequestTypeType1,
    check_server_import_request_type_type_1,
)
from ..models.server_import_request_type_type_2_type_1 import (
    ServerImportRequestTypeType2Type1,
    check_server_import_request_type_type_2_type_1,
)
from ..models.server_import_request_type_type_3_type_1 import (
    ServerImportRequestTypeType3Type1,
    check_server_import_request_type_type_3_type_1,
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
            type_ (None | ServerImportRequestTypeType1 | ServerImportRequestTypeType2Type1 |
                ServerImportRequestTypeType3Type1 | Unset): The A2E message type. Default: 'mcp/server/import/req'.
            id (None | str | Unset): Message id; a UUID when absent.
            version (None | str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
            ts (float | None | Unset): Timestamp, seconds since the Unix epoch; now when absent.
            mcp_servers (ServerImportRequestMcpServers | Unset):
            servers (ServerImportRequestServers | Unset):
            replace (bool | None | Unset): Replace a server already registered under the same id with a different config
                (the
                owner's or an admin's). Without it such an entry fails with `code: conflict` and
                nothing stored changes. Default: False.
    """

    type_: (
        None
        | ServerImportRequestTypeType1
        | ServerImportRequestTypeType2Type1
        | ServerImportRequestTypeType3Type1
        | Unset
    ) = "mcp/server/import/req"
    id: None | str | Unset = UNSET
    version: None | str | Unset = "1.0"
    ts: float | None | Unset = UNSET
    mcp_servers: ServerImportRequestMcpServers | Unset = UNSET
    servers: ServerImportRequestServers | Unset = UNSET
    replace: bool | None | Unset = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: None | str | Unset
        if isinstance(self.type_, Unset):
            type_ = UNSET
        elif (
            isinstance(self.type_, str)
            or isinstance(self.type_, str)
            or isinstance(self.type_, str)
        ):
            type_ = self.type_
        else:
            type_ = self.type_

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        version: None | str | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        ts: float | None | Unset
        if isinstance(self.ts, Unset):
            ts = UNSET
        else:
            ts = self.ts

        mcp_servers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.mcp_servers, Unset):
            mcp_servers = self.mcp_servers.to_dict()

        servers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.servers, Unset):
            servers = self.servers.to_dict()

        replace: bool | None | Unset
        if isinstance(self.replace, Unset):
            replace = UNSET
        else:
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

        def _parse_type_(
            data: object,
        ) -> (
            None
            | ServerImportRequestTypeType1
            | ServerImportRequestTypeType2Type1
            | ServerImportRequestTypeType3Type1
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_1 = check_server_import_request_type_type_1(data)

                return type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_2_type_1 = check_server_import_request_type_type_2_type_1(
                    data
                )

                return type_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_3_type_1 = check_server_import_request_type_type_3_type_1(
                    data
                )

                return type_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None
                | ServerImportRequestTypeType1
                | ServerImportRequestTypeType2Type1
                | ServerImportRequestTypeType3Type1
                | Unset,
                data,
            )

        type_ = _parse_type_(d.pop("type", UNSET))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        def _parse_ts(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        ts = _parse_ts(d.pop("ts", UNSET))

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

        def _parse_replace(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        replace = _parse_replace(d.pop("replace", UNSET))

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
