from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="TaskParams")


@_attrs_define
class TaskParams:
    """`task` of a tool call: run the call as a task, answer 202 at once.

    Attributes:
        ttl (int | None | Unset): Milliseconds from its creation that the task and its result are kept (whatever its
            status then): 1000 (1 s) to 86400000 (24 h). After that it is gone (404). Default: 3600000.
    """

    ttl: int | None | Unset = 3600000

    def to_dict(self) -> dict[str, Any]:
        ttl: int | None | Unset
        if isinstance(self.ttl, Unset):
            ttl = UNSET
        else:
            ttl = self.ttl

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if ttl is not UNSET:
            field_dict["ttl"] = ttl

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_ttl(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        ttl = _parse_ttl(d.pop("ttl", UNSET))

        task_params = cls(
            ttl=ttl,
        )

        return task_params
