from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.roots_list_request_type import (
    RootsListRequestType,
    check_roots_list_request_type,
)

T = TypeVar("T", bound="RootsListRequest")


@_attrs_define
class RootsListRequest:
    """mcp/root/list/req: a server asks which roots the agent exposes.

    Attributes:
        type_ (RootsListRequestType): The A2E message type. Default: 'mcp/root/list/req'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        server_id (str):  Default: ''.
        mcp_request_id (str):  Default: ''.
    """

    id: str
    ts: float
    type_: RootsListRequestType = "mcp/root/list/req"
    version: str = "1.0"
    server_id: str = ""
    mcp_request_id: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        server_id = self.server_id

        mcp_request_id = self.mcp_request_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "server_id": server_id,
                "mcp_request_id": mcp_request_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = check_roots_list_request_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        server_id = d.pop("server_id")

        mcp_request_id = d.pop("mcp_request_id")

        roots_list_request = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            server_id=server_id,
            mcp_request_id=mcp_request_id,
        )

        roots_list_request.additional_properties = d
        return roots_list_request

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
