from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.tool_call_cancel_response_type import (
    ToolCallCancelResponseType,
    check_tool_call_cancel_response_type,
)

T = TypeVar("T", bound="ToolCallCancelResponse")


@_attrs_define
class ToolCallCancelResponse:
    """tool/call/cancel/resp: the call was cancelled; its own request answers `cancelled`.

    Attributes:
        type_ (ToolCallCancelResponseType): The A2E message type. Default: 'tool/call/cancel/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        ok (bool):  Default: False.
        call_id (str):  Default: ''.
    """

    id: str
    ts: float
    type_: ToolCallCancelResponseType = "tool/call/cancel/resp"
    version: str = "1.0"
    req_id: str = ""
    ok: bool = False
    call_id: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        ok = self.ok

        call_id = self.call_id

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
                "call_id": call_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = check_tool_call_cancel_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        ok = d.pop("ok")

        call_id = d.pop("call_id")

        tool_call_cancel_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            ok=ok,
            call_id=call_id,
        )

        tool_call_cancel_response.additional_properties = d
        return tool_call_cancel_response

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
