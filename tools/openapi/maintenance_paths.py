WOF = [{"name": "vehicle_id", "in": "query", "description": "Only this vehicle's.", "schema": {"type": "string"}},
       {"name": "status", "in": "query", "schema": ref("WorkOrderStatus")},
       {"name": "priority", "in": "query", "schema": ref("Priority")}]
add("/maintenance/work_orders", "get", op("listWorkOrders", "List work orders", "Maintenance",
    ok("A page of work orders, oldest first.", {"type": "array", "items": ref("WorkOrder")}, listing=True),
    params=[P("Limit"), P("Cursor")] + WOF, perm="maintenance:read",
    desc="An unknown status or priority, or a vehicle_id that is not a vehicle id, is 400 invalid_request."))
add("/maintenance/work_orders", "post", op("createWorkOrder", "Create a work order", "Maintenance",
    ok("The work order, open.", ref("WorkOrder"), "201"),
    errors=["ValidationError", "Conflict"], body=body("WorkOrderInput"), perm="maintenance:write", post=True,
    desc="Emits work_order.created."))
add("/maintenance/work_orders/{work_order_id}", "get", op("getWorkOrder", "Get a work order", "Maintenance",
    ok("The work order.", ref("WorkOrder")), errors=["NotFound"], params=[P("WorkOrderID")], perm="maintenance:read"))
add("/maintenance/work_orders/{work_order_id}", "patch", op("updateWorkOrder", "Update a work order, its status included (JSON merge patch)", "Maintenance",
    ok("The work order after the change.", ref("WorkOrder")),
    errors=["NotFound", "ValidationError", "Conflict"], params=[P("WorkOrderID")],
    body={"required": True, "content": {"application/json": {"schema": ref("WorkOrderPatch")}, "application/merge-patch+json": {"schema": ref("WorkOrderPatch")}}},
    perm="maintenance:write",
    desc="A status change the state machine forbids is 409 invalid_state_transition, naming from and to, and nothing of the patch is applied. "
         "Emits work_order.updated when a field other than status changed and work_order.status_changed {work_order_id, vehicle_id, from, to, at} when the status did. "
         "Moving to completed sets completed_at; when the work order has a schedule_id, it records the service on that schedule "
         "(last_service_date: today; last_service_odometer_km: the work order's odometer_km, else the vehicle's odometer) and starts the schedule's next cycle."))
SF = [{"name": "vehicle_id", "in": "query", "description": "Only this vehicle's.", "schema": {"type": "string"}},
      {"name": "status", "in": "query", "schema": ref("ScheduleStatus")}]
DUE = ("A schedule is reviewed when a location report or a vehicle update moves its vehicle's odometer, when it is created or changed, "
       "when a linked work order completes, and against the calendar every few seconds. When it becomes due_soon or overdue, the server emits "
       "maintenance.due_soon or maintenance.overdue (data: the schedule) and, with auto_create_work_order, opens one linked work order "
       "(title: the schedule's name; priority medium, or high if already overdue), each at most once per service cycle. "
       "A cycle runs from one recorded service to the next.")
add("/maintenance/schedules", "get", op("listSchedules", "List schedules", "Maintenance",
    ok("A page of schedules, oldest first.", {"type": "array", "items": ref("Schedule")}, listing=True),
    params=[P("Limit"), P("Cursor")] + SF, perm="maintenance:read",
    desc="An unknown status, or a vehicle_id that is not a vehicle id, is 400 invalid_request."))
add("/maintenance/schedules", "post", op("createSchedule", "Create a schedule", "Maintenance",
    ok("The schedule, with its computed fields.", ref("Schedule"), "201"),
    errors=["ValidationError", "Conflict"], body=body("ScheduleInput"), perm="maintenance:write", post=True, desc=DUE))
add("/maintenance/schedules/{schedule_id}", "get", op("getSchedule", "Get a schedule", "Maintenance",
    ok("The schedule.", ref("Schedule")), errors=["NotFound"], params=[P("ScheduleID")], perm="maintenance:read"))
add("/maintenance/schedules/{schedule_id}", "patch", op("updateSchedule", "Update a schedule (JSON merge patch)", "Maintenance",
    ok("The schedule after the change, recomputed.", ref("Schedule")),
    errors=["NotFound", "ValidationError"], params=[P("ScheduleID")],
    body={"required": True, "content": {"application/json": {"schema": ref("SchedulePatch")}, "application/merge-patch+json": {"schema": ref("SchedulePatch")}}},
    perm="maintenance:write", desc=DUE))
add("/maintenance/schedules/{schedule_id}", "delete", op("deleteSchedule", "Delete a schedule", "Maintenance",
    ok("Deleted.", ref("ScheduleDeleted")), errors=["NotFound"], params=[P("ScheduleID")], perm="maintenance:write",
    desc="Work orders linked to it stay, with their schedule_id, as history. Deleting a vehicle deletes its schedules."))
