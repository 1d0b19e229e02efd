permissionset 50300 "Courier Admin"
{
    Assignable = true;
    Permissions =
        tabledata "Courier Setup" = RIMD,
        table "Courier Setup" = X,
        page "Courier Setup" = X;
}
