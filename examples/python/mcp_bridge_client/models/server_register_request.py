from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.server_register_request_type import (
    ServerRegisterRequestType,
    check_server_register_request_type,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_server_config import McpServerConfig


T = TypeVar("T", bound="ServerRegisterRequest")


@_attrs_define
class ServerRegisterRequest:
    """mcp/server/register/req: register and connect a new server.

    Attributes:
        type_ (ServerRegisterRequestType | Unset): The A2E message type. Default: 'mcp/server/register/req'.
        id (str | Unset): Message id; a UUID when absent.
        version (str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        config (McpServerConfig | Unset): MCPServerConfig: how to reach one MCP server and what of it to expose.
    """

    type_: ServerRegisterRequestType | Unset = "mcp/server/register/req"
    id: str | Unset = UNSET
    version: str | Unset = "1.0"
    ts: float | Unset = UNSET
    config: McpServerConfig | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        config: dict[str, Any] | Unset = UNSET
        if not isinstance(self.config, Unset):
            config = self.config.to_dict()

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
        if config is not UNSET:
            field_dict["config"] = config

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_server_config import McpServerConfig

        d = dict(src_dict)
        _type_ = d.pop("type", UNSET)
        type_: ServerRegisterRequestType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = check_server_register_request_type(_type_)

        id = d.pop("id", UNSET)

        version = d.pop("version", UNSET)

        ts = d.pop("ts", UNSET)

        _config = d.pop("config", UNSET)
        config: McpServerConfig | Unset
        if isinstance(_config, Unset):
            config = UNSET
        else:
            config = McpServerConfig.from_dict(_config)

        server_register_request = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            config=config,
        )

        server_register_request.additional_properties = d
        return server_register_request

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
