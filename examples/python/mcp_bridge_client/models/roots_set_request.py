from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.roots_set_request_type import (
    RootsSetRequestType,
    check_roots_set_request_type,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_root import McpRoot


T = TypeVar("T", bound="RootsSetRequest")


@_attrs_define
class RootsSetRequest:
    """mcp/roots/set/req: replace the roots this agent exposes; its servers are told.

    Attributes:
        type_ (RootsSetRequestType | Unset): The A2E message type. Default: 'mcp/roots/set/req'.
        id (str | Unset): Message id; a UUID when absent.
        version (str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        roots (list[McpRoot] | Unset):
    """

    type_: RootsSetRequestType | Unset = "mcp/roots/set/req"
    id: str | Unset = UNSET
    version: str | Unset = "1.0"
    ts: float | Unset = UNSET
    roots: list[McpRoot] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        roots: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.roots, Unset):
            roots = []
            for roots_item_data in self.roots:
                roots_item = roots_item_data.to_dict()
                roots.append(roots_item)

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
        _type_ = d.pop("type", UNSET)
        type_: RootsSetRequestType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = check_roots_set_request_type(_type_)

        id = d.pop("id", UNSET)

        version = d.pop("version", UNSET)

        ts = d.pop("ts", UNSET)

        _roots = d.pop("roots", UNSET)
        roots: list[McpRoot] | Unset = UNSET
        if _roots is not UNSET:
            roots = []
            for roots_item_data in _roots:
                roots_item = McpRoot.from_dict(roots_item_data)

                roots.append(roots_item)

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
