from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.roots_get_response_type import (
    RootsGetResponseType,
    check_roots_get_response_type,
)

if TYPE_CHECKING:
    from ..models.mcp_root import McpRoot


T = TypeVar("T", bound="RootsGetResponse")


@_attrs_define
class RootsGetResponse:
    """mcp/roots/get/resp.

    Attributes:
        type_ (RootsGetResponseType): The A2E message type. Default: 'mcp/roots/get/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        roots (list[McpRoot]):
    """

    id: str
    ts: float
    roots: list[McpRoot]
    type_: RootsGetResponseType = "mcp/roots/get/resp"
    version: str = "1.0"
    req_id: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        roots = []
        for roots_item_data in self.roots:
            roots_item = roots_item_data.to_dict()
            roots.append(roots_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "roots": roots,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_root import McpRoot

        d = dict(src_dict)
        type_ = check_roots_get_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        roots = []
        _roots = d.pop("roots")
        for roots_item_data in _roots:
            roots_item = McpRoot.from_dict(roots_item_data)

            roots.append(roots_item)

        roots_get_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            roots=roots,
        )

        roots_get_response.additional_properties = d
        return roots_get_response

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
