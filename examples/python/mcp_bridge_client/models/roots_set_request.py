from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.roots_set_request_type_type_1 import (
    RootsSetRequestTypeType1,
    check_roots_set_request_type_type_1,
)
from ..models.roots_set_request_type_type_2_type_1 import (
    RootsSetRequestTypeType2Type1,
    check_roots_set_request_type_type_2_type_1,
)
from ..models.roots_set_request_type_type_3_type_1 import (
    RootsSetRequestTypeType3Type1,
    check_roots_set_request_type_type_3_type_1,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_root import McpRoot


T = TypeVar("T", bound="RootsSetRequest")


@_attrs_define
class RootsSetRequest:
    """mcp/roots/set/req: replace the roots this agent exposes; its servers are told.

    Attributes:
        type_ (None | RootsSetRequestTypeType1 | RootsSetRequestTypeType2Type1 | RootsSetRequestTypeType3Type1 | Unset):
            The A2E message type. Default: 'mcp/roots/set/req'.
        id (None | str | Unset): Message id; a UUID when absent.
        version (None | str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | None | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        roots (list[McpRoot] | None | Unset):
    """

    type_: (
        None
        | RootsSetRequestTypeType1
        | RootsSetRequestTypeType2Type1
        | RootsSetRequestTypeType3Type1
        | Unset
    ) = "mcp/roots/set/req"
    id: None | str | Unset = UNSET
    version: None | str | Unset = "1.0"
    ts: float | None | Unset = UNSET
    roots: list[McpRoot] | None | Unset = UNSET
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

        roots: list[dict[str, Any]] | None | Unset
        if isinstance(self.roots, Unset):
            roots = UNSET
        elif isinstance(self.roots, list):
            roots = []
            for roots_type_0_item_data in self.roots:
                roots_type_0_item = roots_type_0_item_data.to_dict()
                roots.append(roots_type_0_item)

        else:
            roots = self.roots

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
        if roots is not UNSET:
            field_dict["roots"] = roots

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_root import McpRoot

        d = dict(src_dict)

        def _parse_type_(
            data: object,
        ) -> (
            None
            | RootsSetRequestTypeType1
            | RootsSetRequestTypeType2Type1
            | RootsSetRequestTypeType3Type1
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_1 = check_roots_set_request_type_type_1(data)

                return type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_2_type_1 = check_roots_set_request_type_type_2_type_1(data)

                return type_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_3_type_1 = check_roots_set_request_type_type_3_type_1(data)

                return type_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None
                | RootsSetRequestTypeType1
                | RootsSetRequestTypeType2Type1
                | RootsSetRequestTypeType3Type1
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

        def _parse_roots(data: object) -> list[McpRoot] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                roots_type_0 = []
                _roots_type_0 = data
                for roots_type_0_item_data in _roots_type_0:
                    roots_type_0_item = McpRoot.from_dict(roots_type_0_item_data)

                    roots_type_0.append(roots_type_0_item)

                return roots_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[McpRoot] | None | Unset, data)

        roots = _parse_roots(d.pop("roots", UNSET))

        roots_set_request = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            roots=roots,
        )

        roots_set_request.additional_properties = d
        return roots_set_request

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
