from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.completion_response_type import (
    CompletionResponseType,
    check_completion_response_type,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="CompletionResponse")


@_attrs_define
class CompletionResponse:
    """mcp/completion/resp.

    Attributes:
        type_ (CompletionResponseType): The A2E message type. Default: 'mcp/completion/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        server_id (str):  Default: ''.
        values (list[str]):
        has_more (bool):  Default: False.
        total (int | None | Unset): How many values there are in all, when the server says.
    """

    id: str
    ts: float
    values: list[str]
    type_: CompletionResponseType = "mcp/completion/resp"
    version: str = "1.0"
    req_id: str = ""
    server_id: str = ""
    has_more: bool = False
    total: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        server_id = self.server_id

        values = self.values

        has_more = self.has_more

        total: int | None | Unset
        if isinstance(self.total, Unset):
            total = UNSET
        else:
            total = self.total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "server_id": server_id,
                "values": values,
                "has_more": has_more,
            }
        )
        if total is not UNSET:
            field_dict["total"] = total

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = check_completion_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        server_id = d.pop("server_id")

        values = cast(list[str], d.pop("values"))

        has_more = d.pop("has_more")

        def _parse_total(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        total = _parse_total(d.pop("total", UNSET))

        completion_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            server_id=server_id,
            values=values,
            has_more=has_more,
            total=total,
        )

        completion_response.additional_properties = d
        return completion_response

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
