from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.resource_read_request_type import (
    ResourceReadRequestType,
    check_resource_read_request_type,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ResourceReadRequest")


@_attrs_define
class ResourceReadRequest:
    """mcp/resource/read/req.

    Attributes:
        uri (str):
        type_ (ResourceReadRequestType | Unset): The A2E message type. Default: 'mcp/resource/read/req'.
        id (str | Unset): Message id; a UUID when absent.
        version (str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        server_id (str | Unset): Server hint; routed by URI when empty. Default: ''.
    """

    uri: str
    type_: ResourceReadRequestType | Unset = "mcp/resource/read/req"
    id: str | Unset = UNSET
    version: str | Unset = "1.0"
    ts: float | Unset = UNSET
    server_id: str | Unset = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        uri = self.uri

        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        server_id = self.server_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "uri": uri,
            }
        )
        if type_ is not UNSET:
            field_dict["type"] = type_
        if id is not UNSET:
            field_dict["id"] = id
        if version is not UNSET:
            field_dict["version"] = version
        if ts is not UNSET:
            field_dict["ts"] = ts
        if server_id is not UNSET:
            field_dict["server_id"] = server_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        uri = d.pop("uri")

        _type_ = d.pop("type", UNSET)
        type_: ResourceReadRequestType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = check_resource_read_request_type(_type_)

        id = d.pop("id", UNSET)

        version = d.pop("version", UNSET)

        ts = d.pop("ts", UNSET)

        server_id = d.pop("server_id", UNSET)

        resource_read_request = cls(
            uri=uri,
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            server_id=server_id,
        )

        resource_read_request.additional_properties = d
        return resource_read_request

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
