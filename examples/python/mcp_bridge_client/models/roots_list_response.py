from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.roots_list_response_type import (
    RootsListResponseType,
    check_roots_list_response_type,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_root import McpRoot


T = TypeVar("T", bound="RootsListResponse")


@_attrs_define
class RootsListResponse:
    """mcp/root/list/resp: the roots the agent exposes.

    Attributes:
        type_ (RootsListResponseType | Unset): The A2E message type. Default: 'mcp/root/list/resp'.
        id (str | Unset): Message id; a UUID when absent.
        version (str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str | Unset): Echoes the request's `id`. Default: ''.
        server_id (str | Unset):  Default: ''.
        mcp_request_id (str | Unset):  Default: ''.
        roots (list[McpRoot] | Unset):
    """

    type_: RootsListResponseType | Unset = "mcp/root/list/resp"
    id: str | Unset = UNSET
    version: str | Unset = "1.0"
    ts: float | Unset = UNSET
    req_id: str | Unset = ""
    server_id: str | Unset = ""
    mcp_request_id: str | Unset = ""
    roots: list[McpRoot] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        server_id = self.server_id

        mcp_request_id = self.mcp_request_id

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
        if req_id is not UNSET:
            field_dict["req_id"] = req_id
        if server_id is not UNSET:
            field_dict["server_id"] = server_id
        if mcp_request_id is not UNSET:
            field_dict["mcp_request_id"] = mcp_request_id
        if roots is not UNSET:
            field_dict["roots"] = roots

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_root import McpRoot

        d = dict(src_dict)
        _type_ = d.pop("type", UNSET)
        type_: RootsListResponseType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = check_roots_list_response_type(_type_)

        id = d.pop("id", UNSET)

        version = d.pop("version", UNSET)

        ts = d.pop("ts", UNSET)

        req_id = d.pop("req_id", UNSET)

        server_id = d.pop("server_id", UNSET)

        mcp_request_id = d.pop("mcp_request_id", UNSET)

        _roots = d.pop("roots", UNSET)
        roots: list[McpRoot] | Unset = UNSET
        if _roots is not UNSET:
            roots = []
            for roots_item_data in _roots:
                roots_item = McpRoot.from_dict(roots_item_data)

                roots.append(roots_item)

        roots_list_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            server_id=server_id,
            mcp_request_id=mcp_request_id,
            roots=roots,
        )

        roots_list_response.additional_properties = d
        return roots_list_response

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
