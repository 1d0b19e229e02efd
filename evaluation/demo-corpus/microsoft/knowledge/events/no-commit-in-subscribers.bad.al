codeunit 50153 "Delivery Plan Subscriber Bad"
{
    [EventSubscriber(ObjectType::Table, Database::"Sales Header", 'OnAfterValidateEvent', 'Requested Delivery Date', false, false)]
    local procedure AddPlanEntry(var Rec: Record "Sales Header"; var xRec: Record "Sales Header"; CurrFieldNo: Integer)
    var
        DeliveryPlanEntry: Record "Delivery Plan Entry";
    begin
        if Rec.IsTemporary() then
            exit;
        DeliveryPlanEntry.Init();
        DeliveryPlanEntry."Order No." := Rec."No.";
        DeliveryPlanEntry."Requested Date" := Rec."Requested Delivery Date";
        DeliveryPlanEntry.Insert(true);
        Commit();
    end;
}
