from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.error_code import ErrorCode, check_error_code
from ..models.import_action import ImportAction, check_import_action
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_server_info import McpServerInfo


T = TypeVar("T", bound="ImportResult")


@_attrs_define
class ImportResult:
    """What happened to one server of an import (beyond the seed).

    Attributes:
        server_id (str):  Default: ''.
        action (ImportAction): What an import did with one server (`action` of an import result).
        ok (bool): Whether the bridge now has what the entry asks for (`skipped` included). Default: False.
        error (str): Why it failed or was skipped. Default: ''.
        code (ErrorCode | None | Unset):
        server (McpServerInfo | None | Unset):
    """

    action: ImportAction
    server_id: str = ""
    ok: bool = False
    error: str = ""
    code: ErrorCode | None | Unset = UNSET
    server: McpServerInfo | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.mcp_server_info import McpServerInfo

        server_id = self.server_id

        action: str = self.action

        ok = self.ok

        error = self.error

        code: None | str | Unset
        if isinstance(self.code, Unset):
            code = UNSET
        elif isinstance(self.code, str):
            code = self.code
        else:
            code = self.code

        server: dict[str, Any] | None | Unset
        if isinstance(self.server, Unset):
            server = UNSET
        elif isinstance(self.server, McpServerInfo):
            server = self.server.to_dict()
        else:
            server = self.server

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "server_id": server_id,
                "action": action,
                "ok": ok,
                "error": error,
            }
        )
        if code is not UNSET:
            field_dict["code"] = code
        if server is not UNSET:
            field_dict["server"] = server

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_server_info import McpServerInfo

        d = dict(src_dict)
        server_id = d.pop("server_id")

        action = check_import_action(d.pop("action"))

        ok = d.pop("ok")

        error = d.pop("error")

        def _parse_code(data: object) -> ErrorCode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                code_type_0 = check_error_code(data)

                return code_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ErrorCode | None | Unset, data)

        code = _parse_code(d.pop("code", UNSET))

        def _parse_server(data: object) -> McpServerInfo | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                server_type_0 = McpServerInfo.from_dict(data)

                return server_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(McpServerInfo | None | Unset, data)

        server = _parse_server(d.pop("server", UNSET))

        import_result = cls(
            server_id=server_id,
            action=action,
            ok=ok,
            error=error,
            code=code,
            server=server,
        )

        import_result.additional_properties = d
        return import_result

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
