from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.server_register_response_type import (
    ServerRegisterResponseType,
    check_server_register_response_type,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_server_info import McpServerInfo


T = TypeVar("T", bound="ServerRegisterResponse")


@_attrs_define
class ServerRegisterResponse:
    """mcp/server/register/resp.

    Attributes:
        type_ (ServerRegisterResponseType): The A2E message type. Default: 'mcp/server/register/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        ok (bool):  Default: False.
        error (str): Why registration failed (on failure). Default: ''.
        server (McpServerInfo | None | Unset):
    """

    id: str
    ts: float
    type_: ServerRegisterResponseType = "mcp/server/register/resp"
    version: str = "1.0"
    req_id: str = ""
    ok: bool = False
    error: str = ""
    server: McpServerInfo | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.mcp_server_info import McpServerInfo

        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        ok = self.ok

        error = self.error

        server: dict[str, Any] | None | Unset
        if isinstance(self.server, Unset):
            server = UNSET
        elif isinstance(self.server, McpServerInfo):
            server = self.server.to_dict()
        else:
            server = self.server

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "ok": ok,
                "error": error,
            }
        )
        if server is not UNSET:
            field_dict["server"] = server

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_server_info import McpServerInfo

        d = dict(src_dict)
        type_ = check_server_register_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        ok = d.pop("ok")

        error = d.pop("error")

        def _parse_server(data: object) -> McpServerInfo | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                server_type_0 = McpServerInfo.from_dict(data)

                return server_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(McpServerInfo | None | Unset, data)

        server = _parse_server(d.pop("server", UNSET))

        server_register_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            ok=ok,
            error=error,
            server=server,
        )

        server_register_response.additional_properties = d
        return server_register_response

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
