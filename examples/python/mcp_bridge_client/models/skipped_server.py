from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SkippedServer")


@_attrs_define
class SkippedServer:
    """A server a merged listing left out: it did not answer within the listing's bound
    (`MCP_BRIDGE_LIST_TIMEOUT`) or failed; its entries are missing from this page.

        Attributes:
            server_id (str):  Default: ''.
            reason (str): Why, in words. Default: ''.
    """

    server_id: str = ""
    reason: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        server_id = self.server_id

        reason = self.reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "server_id": server_id,
                "reason": reason,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        server_id = d.pop("server_id")

        reason = d.pop("reason")

        skipped_server = cls(
            server_id=server_id,
            reason=reason,
        )

        skipped_server.additional_properties = d
        return skipped_server

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
