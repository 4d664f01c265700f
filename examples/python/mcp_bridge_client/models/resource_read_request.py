from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.resource_read_request_type_type_1 import (
    ResourceReadRequestTypeType1,
    check_resource_read_request_type_type_1,
)
from ..models.resource_read_request_type_type_2_type_1 import (
    ResourceReadRequestTypeType2Type1,
    check_resource_read_request_type_type_2_type_1,
)
from ..models.resource_read_request_type_type_3_type_1 import (
    ResourceReadRequestTypeType3Type1,
    check_resource_read_request_type_type_3_type_1,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ResourceReadRequest")


@_attrs_define
class ResourceReadRequest:
    """mcp/resource/read/req.

    Attributes:
        uri (None | str):
        type_ (None | ResourceReadRequestTypeType1 | ResourceReadRequestTypeType2Type1 |
            ResourceReadRequestTypeType3Type1 | Unset): The A2E message type. Default: 'mcp/resource/read/req'.
        id (None | str | Unset): Message id; a UUID when absent.
        version (None | str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | None | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        server_id (None | str | Unset): Server hint; routed by URI when empty. Default: ''.
    """

    uri: None | str
    type_: (
        None
        | ResourceReadRequestTypeType1
        | ResourceReadRequestTypeType2Type1
        | ResourceReadRequestTypeType3Type1
        | Unset
    ) = "mcp/resource/read/req"
    id: None | str | Unset = UNSET
    version: None | str | Unset = "1.0"
    ts: float | None | Unset = UNSET
    server_id: None | str | Unset = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        uri: None | str
        uri = self.uri

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

        server_id: None | str | Unset
        if isinstance(self.server_id, Unset):
            server_id = UNSET
        else:
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

        def _parse_uri(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        uri = _parse_uri(d.pop("uri"))

        def _parse_type_(
            data: object,
        ) -> (
            None
            | ResourceReadRequestTypeType1
            | ResourceReadRequestTypeType2Type1
            | ResourceReadRequestTypeType3Type1
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_1 = check_resource_read_request_type_type_1(data)

                return type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_2_type_1 = check_resource_read_request_type_type_2_type_1(
                    data
                )

                return type_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_3_type_1 = check_resource_read_request_type_type_3_type_1(
                    data
                )

                return type_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None
                | ResourceReadRequestTypeType1
                | ResourceReadRequestTypeType2Type1
                | ResourceReadRequestTypeType3Type1
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

        def _parse_server_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        server_id = _parse_server_id(d.pop("server_id", UNSET))

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
