from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.server_import_response_type import (
    ServerImportResponseType,
    check_server_import_response_type,
)

if TYPE_CHECKING:
    from ..models.import_result import ImportResult


T = TypeVar("T", bound="ServerImportResponse")


@_attrs_define
class ServerImportResponse:
    """mcp/server/import/resp: what happened to each server.

    Attributes:
        type_ (ServerImportResponseType): The A2E message type. Default: 'mcp/server/import/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        results (list[ImportResult]):
    """

    id: str
    ts: float
    results: list[ImportResult]
    type_: ServerImportResponseType = "mcp/server/import/resp"
    version: str = "1.0"
    req_id: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "results": results,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.import_result import ImportResult

        d = dict(src_dict)
        type_ = check_server_import_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        results = []
        _results = d.pop("results")
        for results_item_data in _results:
            results_item = ImportResult.from_dict(results_item_data)

            results.append(results_item)

        server_import_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            results=results,
        )

        server_import_response.additional_properties = d
        return server_import_response

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
