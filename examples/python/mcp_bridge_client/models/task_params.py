from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="TaskParams")


@_attrs_define
class TaskParams:
    """`task` of a tool call: run the call as a task, answer 202 at once.

    Attributes:
        ttl (int | Unset): Milliseconds from its creation that the task and its result are kept (whatever its
            status then): 1000 (1 s) to 86400000 (24 h). After that it is gone (404). Default: 3600000.
    """

    ttl: int | Unset = 3600000

    def to_dict(self) -> dict[str, Any]:
        ttl = self.ttl

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if ttl is not UNSET:
            field_dict["ttl"] = ttl

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        ttl = d.pop("ttl", UNSET)

        task_params = cls(
            ttl=ttl,
        )

        return task_params
