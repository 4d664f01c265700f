from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.tool_call_request_type_type_1 import (
    ToolCallRequestTypeType1,
    check_tool_call_request_type_type_1,
)
from ..models.tool_call_request_type_type_2_type_1 import (
    ToolCallRequestTypeType2Type1,
    check_tool_call_request_type_type_2_type_1,
)
from ..models.tool_call_request_type_type_3_type_1 import (
    ToolCallRequestTypeType3Type1,
    check_tool_call_request_type_type_3_type_1,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.task_params import TaskParams
    from ..models.tool_call_request_arguments import ToolCallRequestArguments


T = TypeVar("T", bound="ToolCallRequest")


@_attrs_define
class ToolCallRequest:
    """tool/call/req: call a catalogue tool by its namespaced name.

    Attributes:
        type_ (None | ToolCallRequestTypeType1 | ToolCallRequestTypeType2Type1 | ToolCallRequestTypeType3Type1 | Unset):
            The A2E message type. Default: 'tool/call/req'.
        id (None | str | Unset): Message id; a UUID when absent.
        version (None | str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | None | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        name (None | str | Unset): `{server_id}__{tool}` (or the short alias the catalogue shows for a longer one), an
            agent-bridge tool, or the name a toolset shows. Default: ''.
        arguments (ToolCallRequestArguments | Unset):
        toolset (None | str | Unset): The toolset `name` is a tool of (beyond the seed). Default: ''.
        timeout (float | None | Unset): Seconds; bounded by the server's own `timeout`.
        task (None | TaskParams | Unset):
        app (None | str | Unset): The app the call comes from (MCP Apps), by the `ui://{server_id}/…` URI the bridge
            lists it under (beyond the seed). Needed to call an app-only tool, which only an app
            of the same server may call; a tool not visible to apps is refused with it. Default: ''.
    """

    type_: (
        None
        | ToolCallRequestTypeType1
        | ToolCallRequestTypeType2Type1
        | ToolCallRequestTypeType3Type1
        | Unset
    ) = "tool/call/req"
    id: None | str | Unset = UNSET
    version: None | str | Unset = "1.0"
    ts: float | None | Unset = UNSET
    name: None | str | Unset = ""
    arguments: ToolCallRequestArguments | Unset = UNSET
    toolset: None | str | Unset = ""
    timeout: float | None | Unset = UNSET
    task: None | TaskParams | Unset = UNSET
    app: None | str | Unset = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.task_params import TaskParams

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

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        arguments: dict[str, Any] | Unset = UNSET
        if not isinstance(self.arguments, Unset):
            arguments = self.arguments.to_dict()

        toolset: None | str | Unset
        if isinstance(self.toolset, Unset):
            toolset = UNSET
        else:
            toolset = self.toolset

        timeout: float | None | Unset
        if isinstance(self.timeout, Unset):
            timeout = UNSET
        else:
            timeout = self.timeout

        task: dict[str, Any] | None | Unset
        if isinstance(self.task, Unset):
            task = UNSET
        elif isinstance(self.task, TaskParams):
            task = self.task.to_dict()
        else:
            task = self.task

        app: None | str | Unset
        if isinstance(self.app, Unset):
            app = UNSET
        else:
            app = self.app

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
        if name is not UNSET:
            field_dict["name"] = name
        if arguments is not UNSET:
            field_dict["arguments"] = arguments
        if toolset is not UNSET:
            field_dict["toolset"] = toolset
        if timeout is not UNSET:
            field_dict["timeout"] = timeout
        if task is not UNSET:
            field_dict["task"] = task
        if app is not UNSET:
            field_dict["app"] = app

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.task_params import TaskParams
        from ..models.tool_call_request_arguments import ToolCallRequestArguments

        d = dict(src_dict)

        def _parse_type_(
            data: object,
        ) -> (
            None
            | ToolCallRequestTypeType1
            | ToolCallRequestTypeType2Type1
            | ToolCallRequestTypeType3Type1
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_1 = check_tool_call_request_type_type_1(data)

                return type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_2_type_1 = check_tool_call_request_type_type_2_type_1(data)

                return type_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_3_type_1 = check_tool_call_request_type_type_3_type_1(data)

                return type_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None
                | ToolCallRequestTypeType1
                | ToolCallRequestTypeType2Type1
                | ToolCallRequestTypeType3Type1
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

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        _arguments = d.pop("arguments", UNSET)
        arguments: ToolCallRequestArguments | Unset
        if isinstance(_arguments, Unset):
            arguments = UNSET
        else:
            arguments = ToolCallRequestArguments.from_dict(_arguments)

        def _parse_toolset(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        toolset = _parse_toolset(d.pop("toolset", UNSET))

        def _parse_timeout(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        timeout = _parse_timeout(d.pop("timeout", UNSET))

        def _parse_task(data: object) -> None | TaskParams | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                task_type_0 = TaskParams.from_dict(data)

                return task_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TaskParams | Unset, data)

        task = _parse_task(d.pop("task", UNSET))

        def _parse_app(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        app = _parse_app(d.pop("app", UNSET))

        tool_call_request = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            name=name,
            arguments=arguments,
            toolset=toolset,
            timeout=timeout,
            task=task,
            app=app,
        )

        tool_call_request.additional_properties = d
        return tool_call_request

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
